/**
 * The body of GET /v1/jobs/:id/results in its two formats (docs/api.md), written from the one
 * reader of a job's results (services/batches/jobs.service.ts `openResults`) that the dashboard's
 * download reads too.
 */
import { csvRows } from '../services/csv-export.js';
import type { JobResults, ResultChunk } from '../services/batches/jobs.service.js';

export type ResultsFormat = 'csv' | 'json';

export const CSV_HEADER = 'email,status,score,reason\r\n';

/**
 * Rows per piece of the body. A stored chunk's rows (1,000 by default, up to 256 KB of text with
 * long addresses) written as one string would be allocated among the long-lived objects, kept until
 * the next full collection; pieces of 100 rows stay short-lived (docs/benchmarks.md, "A batch's
 * whole cycle").
 */
const ROWS_PER_PIECE = 100;

/** The body, a few pieces per stored chunk; the JSON envelope carries the request's id. */
export function resultsBody(
  results: JobResults,
  format: ResultsFormat,
  requestId: string,
): AsyncGenerator<string> {
  return format === 'csv' ? csvBody(results) : jsonBody(results, requestId);
}

/** The chunks' rows as [index in the chunk, count] pieces of at most ROWS_PER_PIECE. */
async function* pieces({ chunks }: JobResults): AsyncGenerator<[ResultChunk, number, number]> {
  for await (const chunk of chunks)
    for (let start = 0; start < chunk.rows.length; start += ROWS_PER_PIECE)
      yield [chunk, start, Math.min(ROWS_PER_PIECE, chunk.rows.length - start)];
}

async function* csvBody(results: JobResults): AsyncGenerator<string> {
  yield CSV_HEADER;
  for await (const [chunk, start, count] of pieces(results)) {
    const rows = chunk.rows.slice(start, start + count);
    yield csvRows(rows.map((r, i) => [chunk.emails[start + i]!, r.status, r.score, r.reason ?? '']));
  }
}

async function* jsonBody(results: JobResults, requestId: string): AsyncGenerator<string> {
  yield `{"job_id":${JSON.stringify(results.job.id)},"results":[`;
  let first = true;
  for await (const [chunk, start, count] of pieces(results)) {
    const parts = chunk.rows.slice(start, start + count).map((r, i) =>
      JSON.stringify({
        index: chunk.startIndex + start + i,
        email: chunk.emails[start + i],
        status: r.status,
        score: r.score,
        reason: r.reason,
        // A result shared through the cache by an older process may lack it.
        provider: r.provider ?? null,
      }),
    );
    yield (first ? '' : ',') + parts.join(',');
    first = false;
  }
  yield `],"request_id":${JSON.stringify(requestId)}}`;
}
