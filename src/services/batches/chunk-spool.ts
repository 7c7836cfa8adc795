/**
 * Where a batch submission keeps its encoded chunks between reading the body and storing them: a
 * temporary file (in `os.tmpdir()`, that is `$TMPDIR` or /tmp), not the heap. Held as strings, the
 * chunks of 500,000 addresses of 254 characters were 128 MB of the process's memory for the whole
 * submission, and V8 then let the heap grow in proportion to it through the job's run. Spooled,
 * the peak RSS of `serve` over a 200,000-address cycle of them (submission, run, download) fell
 * from 276 to 208 MB (`npm run bench:batch:cycle`, docs/benchmarks.md). Writing the 128 MB took
 * 70-330 ms spread over the body's upload, reading them back 130-150 ms (a loaded 2-core machine).
 *
 * The file is readable only by its owner and unlinked as soon as it is opened (POSIX keeps it
 * until its descriptor is closed), so nothing is left behind by a crash. close() releases it; a
 * spool dropped without close() (a request that failed between its body and the service) is
 * closed when it is garbage-collected.
 */
import { randomBytes } from 'node:crypto';
import { closeSync, openSync, readSync, unlinkSync, writeSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const leaked = new FinalizationRegistry<{ fd: number | null }>((file) => {
  if (file.fd !== null) closeSync(file.fd);
});

export class ChunkSpool {
  /** Shared with the finalizer, which must not hold the spool itself. */
  readonly #file: { fd: number | null };
  /** Byte offset where chunk i starts; the last entry is the end of the file. */
  readonly #offsets: number[] = [0];
  #scratch = Buffer.alloc(0);

  constructor(dir: string = tmpdir()) {
    const path = join(dir, `mailverdict-batch-${randomBytes(12).toString('hex')}`);
    const fd = openSync(path, 'wx+', 0o600);
    try {
      unlinkSync(path);
    } catch (err) {
      closeSync(fd);
      throw err;
    }
    this.#file = { fd };
    leaked.register(this, this.#file, this);
  }

  /** Chunks appended so far. */
  get count(): number {
    return this.#offsets.length - 1;
  }

  append(text: string): void {
    const length = Buffer.byteLength(text, 'utf8');
    const scratch = this.#scratchOf(length);
    scratch.write(text, 0, length, 'utf8');
    const start = this.#offsets[this.#offsets.length - 1]!;
    let written = 0;
    while (written < length)
      written += writeSync(this.#fd(), scratch, written, length - written, start + written);
    this.#offsets.push(start + length);
  }

  /** The text of chunk `seq`, as appended. */
  read(seq: number): string {
    if (!Number.isInteger(seq) || seq < 0 || seq >= this.count) throw new RangeError(`no chunk ${seq}`);
    const start = this.#offsets[seq]!;
    const length = this.#offsets[seq + 1]! - start;
    const scratch = this.#scratchOf(length);
    let read = 0;
    while (read < length) {
      const n = readSync(this.#fd(), scratch, read, length - read, start + read);
      if (n === 0) throw new Error(`chunk ${seq} of a batch spool is cut short`);
      read += n;
    }
    return scratch.toString('utf8', 0, length);
  }

  /** Releases the file; reading afterwards throws. Idempotent. */
  close(): void {
    if (this.#file.fd === null) return;
    leaked.unregister(this);
    const fd = this.#file.fd;
    this.#file.fd = null;
    closeSync(fd);
  }

  #fd(): number {
    if (this.#file.fd === null) throw new Error('the batch spool is closed');
    return this.#file.fd;
  }

  /** One buffer reused for every write and read: a chunk costs no new memory. */
  #scratchOf(length: number): Buffer {
    if (this.#scratch.length < length)
      this.#scratch = Buffer.allocUnsafe(Math.max(length, 2 * this.#scratch.length));
    return this.#scratch;
  }
}
