/**
 * The dashboard's download of a list (docs/dashboard.md, "Lists: upload and download"): the
 * uploaded file's own columns in their order, then one column per entry of RESULT_COLUMNS, only
 * for the verdicts asked for, as CSV (streamed a chunk at a time) or XLSX (write-excel-file).
 * Every text cell is neutralised as csv-export.ts does, in both formats. The v1 API's download
 * (jobs.service.ts) is not this one and keeps its four columns.
 */
import writeXlsxFile from 'write-excel-file/node';
import { AppError } from '../../errors.js';
import { parseAddress } from '../../engine/syntax.js';
import { suggestCorrection } from '../../engine/lists/typo.js';
import type { Status } from '../../engine/types.js';
import { ChunkDecodeError, type ResultRow } from '../../store/chunk-codec.js';
import type { Executor } from '../../store/executor.js';
import { findUploadByJob, readUploadCells } from '../../store/list-upload.store.js';
import type { ListUploadRow } from '../../store/schema/dashboard.schema.js';
import type { JobRow } from '../../store/schema/jobs.schema.js';
import { csvRows, safeCell } from '../csv-export.js';
import { openResults, type JobResults, type JobsDeps } from '../batches/jobs.service.js';

type Cell = string | number;

/** One result row as the download sees it: the stored result and the typo suggestion. */
export interface DownloadResult extends ResultRow {
  did_you_mean: string | null;
}

/** The columns after the file's own, in order. Adding a column is adding one line here. */
export const RESULT_COLUMNS: readonly { name: string; value: (r: DownloadResult) => Cell }[] = [
  { name: 'status', value: (r) => r.status },
  { name: 'score', value: (r) => r.score },
  { name: 'reason', value: (r) => r.reason ?? '' },
  { name: 'did_you_mean', value: (r) => r.did_you_mean ?? '' },
  { name: 'provider', value: (r) => r.provider ?? '' },
];

export const DOWNLOAD_FORMATS = ['csv', 'xlsx'] as const;
export type DownloadFormat = (typeof DOWNLOAD_FORMATS)[number];

/**
 * What to do with a suggested correction: `beside` adds a `corrected_email` column after the
 * address (the suggestion, or the address itself when there is none); `replace` writes the
 * suggestion in place of the address. The verdict stays the one of the address as submitted.
 */
export type CorrectedOption = 'beside' | 'replace' | null;

export interface DownloadOptions {
  verdicts: ReadonlySet<Status> | null;
  format: DownloadFormat;
  corrected: CorrectedOption;
  /**
   * The largest list offered as XLSX (the sheet is built in memory: 500,000 rows peaked at
   * 813 MB); a bigger one is refused with 422 and downloads as CSV, which streams.
   */
  xlsxMaxRows: number;
}

export interface Download {
  filename: string;
  contentType: string;
  body: AsyncIterable<string | Buffer>;
}

const CONTENT_TYPE: Record<DownloadFormat, string> = {
  csv: 'text/csv; charset=utf-8',
  xlsx: 'application/vnd.openxmlformats-officedocument.spreadsheetml.sheet',
};

/** The suggested correction of a submitted address, as the single verification gives it. */
export function suggestionFor(email: string): string | null {
  const parsed = parseAddress(email);
  return parsed.ok && !parsed.literal ? suggestCorrection(parsed.local, parsed.domain) : null;
}

/** Where the address sits and the file's own column names (column_N where it had none). */
export function ownColumns(upload: ListUploadRow | undefined): { names: string[]; emailAt: number } {
  if (!upload) return { names: ['email'], emailAt: 0 };
  const own = upload.header === null ? [] : (JSON.parse(upload.header) as string[]);
  const names = Array.from({ length: upload.column_count }, (_, i) =>
    i < own.length ? own[i]! : i === upload.email_column ? 'email' : `column_${i + 1}`,
  );
  return { names, emailAt: upload.email_column };
}

function decodeCells(text: string | undefined, expected: number): string[][] {
  if (text === undefined) throw new ChunkDecodeError('the uploaded columns of a chunk are gone');
  const value = JSON.parse(text) as unknown;
  if (!Array.isArray(value) || value.length !== expected)
    throw new ChunkDecodeError(`uploaded columns are not ${expected} rows`);
  return value as string[][];
}

/** The header, then the kept rows a chunk at a time (one chunk in memory at a time). */
async function* downloadRows(
  db: Executor,
  { job, chunks }: JobResults,
  upload: ListUploadRow | undefined,
  { verdicts, corrected }: DownloadOptions,
): AsyncGenerator<Cell[][]> {
  const { names, emailAt } = ownColumns(upload);
  const width = names.length;
  const withAddress = (row: Cell[], extra: Cell): Cell[] =>
    corrected === 'beside' ? [...row.slice(0, emailAt + 1), extra, ...row.slice(emailAt + 1)] : row;
  yield [[...withAddress(names, 'corrected_email'), ...RESULT_COLUMNS.map((c) => c.name)]];
  for await (const { seq, emails, rows: results } of chunks) {
    const cells = upload ? decodeCells(await readUploadCells(db, job.id, seq), emails.length) : null;
    const rows: Cell[][] = [];
    for (let i = 0; i < emails.length; i++) {
      const result = results[i]!;
      if (verdicts !== null && !verdicts.has(result.status)) continue;
      const email = emails[i]!;
      const r: DownloadResult = { ...result, did_you_mean: suggestionFor(email) };
      const own: Cell[] = cells ? [...cells[i]!] : [];
      own.splice(emailAt, 0, corrected === 'replace' ? (r.did_you_mean ?? email) : email);
      while (own.length < width) own.push('');
      rows.push([...withAddress(own, r.did_you_mean ?? email), ...RESULT_COLUMNS.map((c) => c.value(r))]);
    }
    if (rows.length > 0) yield rows;
  }
}

async function* csvBody(rows: AsyncIterable<Cell[][]>): AsyncGenerator<string> {
  for await (const batch of rows) yield csvRows(batch);
}

/**
 * One worksheet: write-excel-file builds the sheet from the rows in memory and streams the
 * zipped file out (bench/xlsx-download.bench.ts: 500,000 rows of 9 columns peak at about 0.8 GB
 * RSS, docs/benchmarks.md). Text cells are neutralised as in the CSV; scores stay numbers.
 */
export async function* xlsxBody(rows: AsyncIterable<Cell[][]>): AsyncGenerator<Buffer> {
  const sheet: Cell[][] = [];
  for await (const batch of rows) for (const row of batch) sheet.push(row.map(safeCell));
  const file = writeXlsxFile(sheet, { sheet: 'Results' });
  // toStream() without a target answers a Readable (its type is the union of both overloads).
  const toStream = file.toStream.bind(file) as () => Promise<NodeJS.ReadableStream>;
  const stream = await toStream();
  for await (const part of stream) yield Buffer.isBuffer(part) ? part : Buffer.from(part);
}

/** A file name that is safe in a Content-Disposition header: the list's name, ASCII only. */
function downloadName(job: JobRow, upload: ListUploadRow | undefined, options: DownloadOptions): string {
  const base = (upload?.name ?? job.id)
    .replace(/\.[A-Za-z0-9]{1,5}$/, '')
    .replace(/[^A-Za-z0-9._-]+/g, '_')
    .slice(0, 100);
  const part = options.verdicts === null ? 'all' : [...options.verdicts].sort().join('+');
  return `${base || job.id}-${part}.${options.format}`;
}

/**
 * The results of a completed job as CSV or XLSX. 404, 409 `job_not_ready`, 410
 * `results_expired` as GET /v1/jobs/:id/results.
 */
export async function openDownload(
  deps: JobsDeps,
  accountId: string,
  id: string,
  options: DownloadOptions,
): Promise<Download> {
  const results = await openResults(deps, accountId, id);
  if (options.format === 'xlsx' && results.job.total > options.xlsxMaxRows)
    throw new AppError(
      'invalid_request',
      `lists of more than ${options.xlsxMaxRows.toLocaleString('en')} rows download as CSV only (this one has ${results.job.total.toLocaleString('en')})`,
    );
  const upload = await findUploadByJob(deps.db, results.job.id);
  const rows = downloadRows(deps.db, results, upload, options);
  return {
    filename: downloadName(results.job, upload, options),
    contentType: CONTENT_TYPE[options.format],
    body: options.format === 'xlsx' ? xlsxBody(rows) : csvBody(rows),
  };
}
