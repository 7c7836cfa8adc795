import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { intakeAll } from '../../src/services/batches/batch-intake.js';
import { ChunkSpool } from '../../src/services/batches/chunk-spool.js';
import { encodeEmails } from '../../src/store/chunk-codec.js';

describe('ChunkSpool', () => {
  let dir: string;
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'mailverdict-spool-test-'));
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  it('gives back every appended text exactly, in any order', () => {
    const spool = new ChunkSpool(dir);
    const texts = [
      '["a@b.c"]',
      '["é@ü.de","x\\r\\ny@z"]',
      '',
      `["${'a'.repeat(300_000)}"]`,
      '["😀@emoji.example"]',
    ];
    for (const t of texts) spool.append(t);
    expect(spool.count).toBe(texts.length);
    for (const seq of [4, 0, 3, 1, 2]) expect(spool.read(seq)).toBe(texts[seq]);
    spool.close();
  });

  it('leaves no file behind, even before it is closed', () => {
    const spool = new ChunkSpool(dir);
    spool.append('["a@b.c"]');
    expect(readdirSync(dir)).toEqual([]);
    spool.close();
  });

  it('refuses to read past its chunks or after close', () => {
    const spool = new ChunkSpool(dir);
    spool.append('["a@b.c"]');
    expect(() => spool.read(1)).toThrow(RangeError);
    spool.close();
    spool.close();
    expect(() => spool.read(0)).toThrow(/closed/);
  });
});

describe('batch intake', () => {
  it('spools one chunk text per chunk, the same text as encoding the chunk', () => {
    const emails = Array.from({ length: 25 }, (_, i) => `user${i}@example.com`);
    const addresses = intakeAll(emails, 10);
    expect(addresses.chunks.count).toBe(3);
    expect([0, 1, 2].map((seq) => addresses.chunks.read(seq))).toEqual([
      encodeEmails(emails.slice(0, 10)),
      encodeEmails(emails.slice(10, 20)),
      encodeEmails(emails.slice(20)),
    ]);
    addresses.chunks.close();
  });
});
