/**
 * The addresses of a batch submission, taken one at a time as the body is read: each is checked
 * against the per-entry limit, appended to the chunk being filled (encoded and dropped from
 * memory once full), fed to the idempotency hash and to the repeat finder. Full chunks go to a
 * temporary file (services/batches/chunk-spool.ts) until they are stored: nothing holds the whole list in
 * memory, as an array or as text.
 */
import { createHash, type Hash } from 'node:crypto';
import { AppError } from '../../errors.js';
import { encodeEmails, RepeatFinder } from '../../store/chunk-codec.js';
import { ChunkSpool } from './chunk-spool.js';

/** At most this many addresses per batch (the contract's limit). */
export const MAX_BATCH_ADDRESSES = 500_000;
/**
 * Bytes of a batch's body, an API batch or an uploaded list: 500,000 addresses of up to 254
 * characters, JSON-quoted, fit with room to spare.
 */
export const BATCH_BODY_LIMIT = 150 * 1024 * 1024;
/**
 * Longest batch entry, in characters. An address is at most 254 octets, so a longer string can
 * only be refused as malformed; up to this length it still gets its invalid_email_format row, and
 * beyond it the whole submission is refused (422) before the string is even read to its end.
 */
export const MAX_BATCH_ENTRY_LENGTH = 320;

/** What a finished intake holds, ready to be stored. */
export interface BatchAddresses {
  total: number;
  /**
   * One JSON text per chunk (store/chunk-codec.ts), spooled to a temporary file; submitBatch
   * closes it once the job is stored or refused.
   */
  chunks: ChunkSpool;
  /**
   * Per chunk, the positions whose address occurs elsewhere in the job (JSON, or null); null when
   * not tracked (test-mode jobs are verified offline: a duplicate costs nothing there).
   */
  repeats: (string | null)[] | null;
  /** SHA-256 of the addresses, in order (part of the idempotency hash). */
  digest: string;
}

export class BatchIntake {
  readonly #chunkSize: number;
  readonly #hash: Hash = createHash('sha256');
  readonly #repeats: RepeatFinder | null;
  readonly #chunks = new ChunkSpool();
  #current: string[] = [];
  #total = 0;

  constructor(chunkSize: number, options: { trackRepeats?: boolean } = {}) {
    this.#chunkSize = chunkSize;
    this.#repeats = options.trackRepeats === false ? null : new RepeatFinder();
  }

  get total(): number {
    return this.#total;
  }

  /** Takes the next address; throws 422 invalid_request when the list or the entry is too long. */
  add(email: string): void {
    const index = this.#total;
    if (index >= MAX_BATCH_ADDRESSES) {
      throw new AppError('invalid_request', `emails holds more than ${MAX_BATCH_ADDRESSES} entries`, {
        field: 'emails',
      });
    }
    checkEntryLength(index, email.length);
    this.#total++;
    this.#repeats?.add(email);
    this.#current.push(email);
    if (this.#current.length === this.#chunkSize) this.#flush();
  }

  finish(): BatchAddresses {
    if (this.#current.length > 0) this.#flush();
    return {
      total: this.#total,
      chunks: this.#chunks,
      repeats: this.#repeats?.perChunk(this.#chunkSize) ?? null,
      digest: this.#hash.digest('hex'),
    };
  }

  /** Releases the spooled chunks of an intake that will not be finished (a refused body). */
  discard(): void {
    this.#chunks.close();
  }

  /**
   * Encodes the full chunk and hashes its text: the chunk texts without their brackets, joined
   * by commas, are exactly JSON.stringify of the whole list, so the digest does not depend on the
   * chunk size (one update per chunk: hashing address by address cost 1 s per 500,000).
   */
  #flush(): void {
    const text = encodeEmails(this.#current);
    if (this.#chunks.count > 0) this.#hash.update(',');
    this.#hash.update(text.slice(1, -1));
    this.#chunks.append(text);
    this.#current = [];
  }
}

/** Throws when entry `index` is (or, being read, has grown) longer than the limit. */
export function checkEntryLength(index: number, length: number): void {
  if (length > MAX_BATCH_ENTRY_LENGTH) {
    throw new AppError(
      'invalid_request',
      `emails.${index} is longer than ${MAX_BATCH_ENTRY_LENGTH} characters; no address is longer than 254`,
      { field: `emails.${index}` },
    );
  }
}

/** Takes a whole list at once (the CLI, the dashboard's uploads, tests). */
export function intakeAll(emails: Iterable<string>, chunkSize: number): BatchAddresses {
  const intake = new BatchIntake(chunkSize, { trackRepeats: true });
  for (const email of emails) intake.add(email);
  return intake.finish();
}
