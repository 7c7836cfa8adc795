/**
 * How a chunk's addresses and results are written in its row. Addresses: a JSON array of the
 * submitted strings. Results: a JSON array of compact rows `[status, score, reason, valid]`,
 * one per address, in the same order. JSON keeps any string (commas, quotes, newlines) intact.
 */
import { STATUSES, type Status } from '../engine/types.js';

export interface ResultRow {
  status: Status;
  score: number;
  reason: string | null;
  valid: boolean;
}

type CompactRow = [Status, number, string | null, 0 | 1];

export class ChunkDecodeError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'ChunkDecodeError';
  }
}

export function encodeEmails(emails: readonly string[]): string {
  return JSON.stringify(emails);
}

/** Throws `ChunkDecodeError` unless the text is a JSON array of `expected` strings. */
export function decodeEmails(text: string, expected: number): string[] {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    throw new ChunkDecodeError('chunk addresses are not valid JSON');
  }
  if (!Array.isArray(value) || value.length !== expected || !value.every((v) => typeof v === 'string')) {
    throw new ChunkDecodeError(`chunk addresses are not an array of ${expected} strings`);
  }
  return value;
}

export function encodeResults(rows: readonly ResultRow[]): string {
  return JSON.stringify(rows.map((r): CompactRow => [r.status, r.score, r.reason, r.valid ? 1 : 0]));
}

const STATUS_SET: ReadonlySet<string> = new Set(STATUSES);

/** Throws `ChunkDecodeError` unless the text holds `expected` well-formed compact rows. */
export function decodeResults(text: string, expected: number): ResultRow[] {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    throw new ChunkDecodeError('chunk results are not valid JSON');
  }
  if (!Array.isArray(value) || value.length !== expected) {
    throw new ChunkDecodeError(`chunk results are not an array of ${expected} rows`);
  }
  return value.map((row: unknown) => {
    if (
      !Array.isArray(row) ||
      typeof row[0] !== 'string' ||
      !STATUS_SET.has(row[0]) ||
      typeof row[1] !== 'number' ||
      (row[2] !== null && typeof row[2] !== 'string')
    ) {
      throw new ChunkDecodeError('chunk results hold a malformed row');
    }
    return { status: row[0] as Status, score: row[1], reason: row[2] as string | null, valid: row[3] === 1 };
  });
}

/**
 * The key under which two submitted strings are the same address for probing: the local part
 * as given and the domain lower-cased (the engine also converts IDNA; a miss there only costs
 * a second probe).
 */
export function addressKey(email: string): string {
  const at = email.lastIndexOf('@');
  return at < 0 ? email : `${email.slice(0, at)}@${email.slice(at + 1).toLowerCase()}`;
}

/** FNV-1a of `addressKey(email)`, lower-casing only ASCII letters of the domain (a miss only costs a probe). */
function keyHash(email: string): number {
  const at = email.lastIndexOf('@');
  let h = 0x811c9dc5;
  for (let i = 0; i < email.length; i++) {
    let c = email.charCodeAt(i);
    if (i > at && c >= 65 && c <= 90) c += 32;
    h = Math.imul(h ^ c, 16777619);
  }
  return h >>> 0;
}

/**
 * Marks the positions whose address occurs more than once in the list. Measured on 500,000
 * addresses: a Map of the keys took about 1 s (hashing and holding 500,000 new strings); this
 * open-addressing table of indexes (typed arrays, strings compared only when hashes match)
 * takes 0.2-0.35 s.
 */
function repeatedPositions(emails: readonly string[]): Uint8Array {
  const n = emails.length;
  const repeated = new Uint8Array(n);
  const hashes = new Uint32Array(n);
  let size = 1;
  while (size < 2 * n) size *= 2;
  const mask = size - 1;
  // Slot holds index + 1 of the first address with that key; 0 is empty.
  const table = new Int32Array(size);
  for (let i = 0; i < n; i++) {
    const hash = keyHash(emails[i]!);
    hashes[i] = hash;
    let slot = hash & mask;
    for (;;) {
      const held = table[slot]!;
      if (held === 0) {
        table[slot] = i + 1;
        break;
      }
      const first = held - 1;
      if (hashes[first] === hash && addressKey(emails[first]!) === addressKey(emails[i]!)) {
        repeated[first] = repeated[i] = 1;
        break;
      }
      slot = (slot + 1) & mask;
    }
  }
  return repeated;
}

/** For each chunk, the positions whose address occurs more than once in the whole list (JSON, or null). */
export function encodeRepeats(emails: readonly string[], chunkSize: number): (string | null)[] {
  const repeated = repeatedPositions(emails);
  const out: (string | null)[] = [];
  for (let start = 0; start < emails.length; start += chunkSize) {
    const local: number[] = [];
    for (let i = start; i < Math.min(start + chunkSize, emails.length); i++)
      if (repeated[i] === 1) local.push(i - start);
    out.push(local.length === 0 ? null : JSON.stringify(local));
  }
  return out;
}

/** Positions listed by `encodeRepeats`; a malformed value counts as none (dedupe is an optimisation). */
export function decodeRepeats(text: string | null): number[] {
  if (text === null) return [];
  try {
    const value: unknown = JSON.parse(text);
    return Array.isArray(value) ? value.filter((v): v is number => Number.isInteger(v)) : [];
  } catch {
    return [];
  }
}
