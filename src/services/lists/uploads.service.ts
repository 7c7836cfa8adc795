/**
 * A list uploaded from the dashboard becomes a batch job (docs/dashboard.md, "Lists"): the CSV
 * body is parsed as it streams in (csv-parse), the address column goes to the batch intake as a
 * v1 submission's addresses do, and the row's other cells are stored beside the job, one row per
 * job chunk (`list_upload_rows`), so that the download can put them back. Nothing holds the whole
 * file: memory is one chunk of addresses (the intake spools the rest to a temporary file, as for
 * v1) plus one chunk of other cells.
 *
 * The cells are stored as they came: nothing is neutralised at upload; the download does it
 * (services/csv-export.ts). Every row becomes a row of the job and comes back in the download: a
 * row whose address cell is empty is verified as the empty string, which is `undeliverable` /
 * `invalid_email_format` like any malformed address (it was skipped, and left the download one
 * row short of the file: 191 rows in, 190 out).
 * The upload's rows are written under the upload's id while the file streams in, and tied to
 * the job inside the submission's transaction; an upload that fails or is refused (quota) is
 * deleted, and one whose process died before it was tied is deleted by a later upload after a day.
 */
import type { Readable } from 'node:stream';
import { Transform } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { parse } from 'csv-parse';
import { DAY } from '../../clock.js';
import { AppError, isAppError } from '../../errors.js';
import type { Executor } from '../../store/executor.js';
import { getJob } from '../../store/job.store.js';
import {
  deleteUpload,
  finishUpload,
  findStaleUploads,
  insertUpload,
  insertUploadRows,
  linkUpload,
} from '../../store/list-upload.store.js';
import type { JobMode, JobRow } from '../../store/schema/jobs.schema.js';
import { BatchIntake, MAX_BATCH_ADDRESSES, MAX_BATCH_ENTRY_LENGTH } from '../batches/batch-intake.js';
import { submitBatch, type SubmitDeps } from '../batches/batch.service.js';
import { randomBase62 } from '../ids.js';
import { refuseIfSuspended } from '../accounts/accounts.service.js';

/** Most cells a row may have. */
export const MAX_COLUMNS = 1000;
/** Longest row, in characters: far beyond any real list, short of holding a whole file in one record. */
const MAX_RECORD_CHARACTERS = 1024 * 1024;
/** Abandoned uploads deleted per upload, at most. */
const STALE_SWEEP = 10;

export interface UploadInput {
  accountId: string;
  /** The file's name, as the user knows it. */
  name: string;
  /** Zero-based index of the address column. */
  emailColumn: number;
  /** Whether the first row names the columns. */
  header: boolean;
  mode: JobMode;
  /** The CSV text. */
  body: Readable;
  /** Bytes accepted at most (the v1 batch body limit). */
  byteLimit: number;
}

/** Stops the stream with 413 once more than `limit` bytes came through. */
function byteCounter(limit: number): Transform {
  let bytes = 0;
  return new Transform({
    transform(chunk: Buffer, _encoding, done) {
      bytes += chunk.length;
      if (bytes > limit)
        done(
          new AppError('payload_too_large', `the file is larger than ${Math.floor(limit / 1024 / 1024)} MiB`),
        );
      else done(null, chunk);
    },
  });
}

interface ReadOutcome {
  intake: BatchIntake;
  header: string[] | null;
  columnCount: number;
  /** Rows with something in the address column (the others are verified as empty addresses). */
  addresses: number;
}

/** Reads the CSV, feeding addresses to the intake and storing the other cells chunk by chunk. */
async function readList(
  db: Executor,
  uploadId: string,
  input: UploadInput,
  chunkSize: number,
): Promise<ReadOutcome> {
  const intake = new BatchIntake(chunkSize, { trackRepeats: input.mode === 'live' });
  try {
    return await readInto(intake, db, uploadId, input, chunkSize);
  } catch (err) {
    intake.discard();
    throw err;
  }
}

async function readInto(
  intake: BatchIntake,
  db: Executor,
  uploadId: string,
  input: UploadInput,
  chunkSize: number,
): Promise<ReadOutcome> {
  let header: string[] | null = null;
  let columnCount = 0;
  let row = 0;
  let addresses = 0;
  let seq = 0;
  let pending: string[][] = [];
  const flush = async (): Promise<void> => {
    await insertUploadRows(db, { upload_id: uploadId, seq, job_id: null, cells: JSON.stringify(pending) });
    seq++;
    pending = [];
  };
  const parser = parse({
    bom: true,
    relax_column_count: true,
    // A quote inside an unquoted cell (`=HYPERLINK("…")` as some tools write it) is kept as text.
    relax_quotes: true,
    skip_empty_lines: true,
    max_record_size: MAX_RECORD_CHARACTERS,
  });
  // What the reading below refused with. When it throws while the body is still streaming,
  // pipeline() may reject with the AbortError of tearing the other streams down instead (issue 16:
  // such uploads answered 500); the refusal is what the user must hear, wherever it came.
  let refusal: unknown = null;
  const refuse = (error: AppError): never => {
    refusal ??= error;
    throw error;
  };
  await pipeline(
    input.body,
    byteCounter(input.byteLimit),
    parser,
    async (records: AsyncIterable<string[]>) => {
      for await (const record of records) {
        row++;
        if (record.length > MAX_COLUMNS)
          refuse(
            new AppError(
              'invalid_request',
              `row ${row} has ${record.length} columns; at most ${MAX_COLUMNS} are read`,
            ),
          );
        columnCount = Math.max(columnCount, record.length);
        if (row === 1 && input.header) {
          header = record;
          continue;
        }
        const email = (record[input.emailColumn] ?? '').trim();
        if (email !== '') addresses++;
        if (intake.total >= MAX_BATCH_ADDRESSES)
          refuse(
            new AppError(
              'invalid_request',
              `the file holds more than ${MAX_BATCH_ADDRESSES} addresses, the most one list may have`,
            ),
          );
        if (email.length > MAX_BATCH_ENTRY_LENGTH)
          refuse(
            new AppError(
              'invalid_request',
              `row ${row}: the address cell is longer than ${MAX_BATCH_ENTRY_LENGTH} characters; is column ${input.emailColumn + 1} the address column?`,
            ),
          );
        try {
          intake.add(email);
        } catch (error) {
          if (error instanceof AppError) refuse(error);
          throw error;
        }
        pending.push(record.filter((_, i) => i !== input.emailColumn));
        if (pending.length === chunkSize) await flush();
      }
    },
  ).catch((error: unknown) => {
    throw refusal ?? error;
  });
  if (pending.length > 0) await flush();
  return { intake, header, columnCount, addresses };
}

function parseError(err: unknown): unknown {
  // csv-parse's errors (CSV_*) name the line and what is wrong with it: a 422 the user can act on.
  const code = (err as { code?: unknown }).code;
  if (!isAppError(err) && typeof code === 'string' && code.startsWith('CSV_'))
    return new AppError('invalid_request', `the file is not valid CSV: ${(err as Error).message}`);
  return err;
}

/**
 * Reads the uploaded list and submits it as a batch job of the account (quota as a v1 batch:
 * live jobs count one per address, refused whole with 429 `quota_exceeded`). 422
 * `invalid_request` for a file with no address in the column, more than 500,000 addresses, or
 * that is not CSV; 413 past the byte limit; 403 `account_suspended` while the account is suspended.
 */
export async function uploadList(deps: SubmitDeps, input: UploadInput): Promise<JobRow> {
  // A suspended account's members upload nothing (its keys are refused at the API's door).
  await refuseIfSuspended(deps.db, input.accountId);
  const now = deps.clock.now();
  for (const stale of await findStaleUploads(
    deps.db,
    new Date(now.getTime() - DAY).toISOString(),
    STALE_SWEEP,
  ))
    await deleteUpload(deps.db, stale);
  const uploadId = `upl_${randomBase62(20)}`;
  await insertUpload(deps.db, {
    id: uploadId,
    account_id: input.accountId,
    job_id: null,
    name: input.name,
    header: null,
    email_column: input.emailColumn,
    column_count: 0,
    created_at: now.toISOString(),
  });
  try {
    const read = await readList(deps.db, uploadId, input, deps.config.batch.chunkSize).catch(
      (err: unknown) => {
        throw parseError(err);
      },
    );
    if (read.addresses === 0) {
      read.intake.discard();
      throw new AppError(
        'invalid_request',
        `the file holds no address in column ${input.emailColumn + 1}${input.header ? ' below its header row' : ''}`,
      );
    }
    await finishUpload(deps.db, uploadId, {
      header: read.header === null ? null : JSON.stringify(read.header),
      column_count: Math.max(read.columnCount, input.emailColumn + 1),
    });
    const { submission } = await submitBatch(deps, {
      accountId: input.accountId,
      mode: input.mode,
      request: { addresses: read.intake.finish(), webhookUrl: null, notifyEmail: true },
      idempotencyKey: null,
      onStored: (trx, jobId) => linkUpload(trx, uploadId, jobId),
    });
    const job = await getJob(deps.db, submission.job_id);
    if (!job) throw new AppError('internal_error', 'the job of an upload vanished');
    return job;
  } catch (err) {
    await deleteUpload(deps.db, uploadId).catch(() => undefined);
    throw err;
  }
}
