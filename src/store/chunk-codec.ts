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
