// @vitest-environment node
import { strToU8, unzip as workerUnzip, zipSync } from 'fflate/browser';
import { describe, expect, it } from 'vitest';
import { unzip } from './fflate-sync';

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
});
