/**
 * `npm run bench:xlsx [-- --rows N]`: the dashboard's XLSX download (services/lists/list-download.ts,
 * `xlsxBody`, write-excel-file) for N rows (default 100,000, at most 500,000, the largest list)
 * of nine columns as an uploaded contact list gives them: time, file size and peak RSS. The CSV
 * download streams a chunk at a time and is not measured here.
 */
import { parseArgs } from 'node:util';
import { xlsxBody } from '../src/services/lists/list-download.js';

const { values } = parseArgs({ options: { rows: { type: 'string', default: '100000' } } });
const rows = Math.min(500_000, Math.max(1, Number(values.rows)));
const CHUNK = 1_000;

async function* chunks(): AsyncGenerator<(string | number)[][]> {
  yield [['id', 'first_name', 'email', 'company', 'note', 'status', 'score', 'reason', 'did_you_mean']];
  for (let start = 0; start < rows; start += CHUNK) {
    const batch: (string | number)[][] = [];
    for (let i = start; i < Math.min(rows, start + CHUNK); i++)
      batch.push([
        String(1000 + i),
        `Name${i}`,
        `person${i}@valid.example.com`,
        `Company ${i % 13}`,
        i % 50 === 0 ? '=HYPERLINK("http://x.test")' : `met at fair ${i % 7}, hall B`,
        'deliverable',
        99,
        '',
        '',
      ]);
    yield batch;
  }
}

const started = performance.now();
let bytes = 0;
let peak = process.memoryUsage().rss;
for await (const part of xlsxBody(chunks())) {
  bytes += part.length;
  peak = Math.max(peak, process.memoryUsage().rss);
}
console.log(
  `xlsx: ${rows.toLocaleString('en-US')} rows in ${((performance.now() - started) / 1000).toFixed(1)} s, ` +
    `${(bytes / 1e6).toFixed(1)} MB file, peak RSS ${(peak / 1e6).toFixed(0)} MB`,
);
