// @vitest-environment node
import { strToU8, unzip as workerUnzip, zipSync } from 'fflate/browser';
import { describe, expect, it } from 'vitest';
import { unpackedLimit, unzip } from './fflate-sync';

// An entry over fflate's 512 KB threshold, compressible enough that fflate would hand it to a worker.
const big = strToU8('<row><c><v>1</v></c></row>'.repeat(40_000));
const archive = zipSync({ 'xl/worksheets/sheet1.xml': big, 'small.xml': strToU8('<a/>') });

const unzipWith = (fn: typeof unzip, data: Uint8Array) =>
  new Promise<Record<string, Uint8Array>>((resolve, reject) =>
    fn(data, {}, (error, files) => (error ? reject(error) : resolve(files ?? {}))),
  );

describe('unzipping for the XLSX reader', () => {
  it('needs a worker with fflate’s own unzip (which the CSP would refuse in a browser)', async () => {
    expect(big.length).toBeGreaterThan(512 * 1024);
    // fflate's browser build in plain Node: no Worker global, as a page under `script-src 'self'`
    // gets no blob: worker.
    await expect(unzipWith(workerUnzip as typeof unzip, archive)).rejects.toThrow(/Worker/);
  });

  it('unzips large entries without one', async () => {
    const files = await unzipWith(unzip, archive);
    expect(Object.keys(files).sort()).toEqual(['small.xml', 'xl/worksheets/sheet1.xml']);
    const sheet = files['xl/worksheets/sheet1.xml'];
    expect(sheet?.length).toBe(big.length);
    expect(Buffer.from(sheet ?? []).equals(Buffer.from(big))).toBe(true);
  });

  it('reports a broken archive through the callback', async () => {
    await expect(unzipWith(unzip, strToU8('not a zip'))).rejects.toThrow();
  });

  it('refuses, before inflating it, an archive that would unpack past its limit', async () => {
    // 80 MiB of zeros pack into about 80 KB: a "zip bomb" that would hang the page.
    const bomb = zipSync({ 'xl/worksheets/sheet1.xml': new Uint8Array(80 * 1024 * 1024) }, { level: 9 });
    expect(bomb.length).toBeLessThan(1024 * 1024);
    expect(unpackedLimit(bomb.length)).toBe(64 * 1024 * 1024);
    await expect(unzipWith(unzip, bomb)).rejects.toThrow(
      /unpacks to more than 64 MiB; save the sheet as CSV/,
    );
  });

  it('lets a large real list through: 100 times its size, at most 256 MiB', () => {
    expect(unpackedLimit(17 * 1024 * 1024)).toBe(256 * 1024 * 1024);
    expect(unpackedLimit(1024 * 1024)).toBe(100 * 1024 * 1024);
  });
});
