/**
 * Lists from the dashboard: a CSV uploaded with columns besides the addresses becomes a batch job;
 * once it has run, its counts by verdict and reason, and a download of the chosen verdicts with
 * the file's other columns intact beside them (neutralised against formula injection as v1's
 * download is). Also: what is refused, quota and refunds, retention, other accounts' jobs.
 */
import { parse } from 'csv-parse/sync';
import { readSheet } from 'read-excel-file/node';
import { afterEach, describe, expect, it } from 'vitest';
import { HOUR } from '../../src/clock.js';
import type { JobDetail, JobItem, JobList } from '../../src/dashboard/contract.js';
import { sweepOnce } from '../../src/jobs/sweep.js';
import {
  API,
  createDashboardHarness,
  errorCode,
  type Browser,
  type DashboardHarness,
} from '../kit/dashboard-kit.js';

/** Each test hashes passwords with scrypt (100-200 ms idle, seconds on a loaded 2-core machine). */
const SLOW = { timeout: 60_000 };

let h: DashboardHarness | undefined;
afterEach(async () => {
  await h?.close();
  h = undefined;
});

async function setUp(flags: Record<string, string> = {}): Promise<{ d: DashboardHarness; browser: Browser }> {
  h = await createDashboardHarness({ flags: { chunkSize: '10', ...flags } });
  const { browser } = await h.signedIn();
  return { d: h, browser };
}

function upload(
  browser: Browser,
  csv: string,
  query: { name?: string; email_column?: number; header?: boolean; mode?: 'live' | 'test' } = {},
) {
  const q = new URLSearchParams({
    name: query.name ?? 'customers.csv',
    email_column: String(query.email_column ?? 1),
    header: String(query.header ?? true),
    mode: query.mode ?? 'test',
  });
  return browser.request('POST', `${API}/lists?${q.toString()}`, { raw: { type: 'text/csv', payload: csv } });
}

const KINDS = ['valid', 'invalid', 'disposable'] as const;

/** `n` rows of name, e-mail, a note with a comma, quotes and a newline, and a unicode city. */
function customers(n: number): { csv: string; rows: string[][] } {
  const rows = Array.from({ length: n }, (_, i) => [
    `Customer ${i}`,
    `user${i}@${KINDS[i % 3]}.example.com`,
    `note ${i}, "quoted"\nsecond line`,
    i % 2 === 0 ? 'Zürich' : 'Kraków',
  ]);
  const quote = (c: string) => (/[",\n]/.test(c) ? `"${c.replace(/"/g, '""')}"` : c);
  const csv = ['name,email,note,city', ...rows.map((r) => r.map(quote).join(','))].join('\r\n');
  return { csv, rows };
}

/** Parses the download (RFC 4180) back into rows. */
function parseCsv(text: string): string[][] {
  return parse(text) as string[][];
}

describe('dashboard lists', SLOW, () => {
  it('turns an uploaded CSV into a job and downloads the chosen verdicts with the other columns intact', async () => {
    const { d, browser } = await setUp();
    const { csv, rows } = customers(25);
    const res = await upload(browser, csv);
    expect(res.statusCode).toBe(202);
    const job = res.json<JobItem>();
    expect(job).toMatchObject({
      name: 'customers.csv',
      status: 'queued',
      mode: 'test',
      total: 25,
      has_original_columns: true,
      downloadable: false,
    });

    await d.drain();
    const detail = (await browser.get(`${API}/jobs/${job.job_id}`)).json<JobDetail>();
    expect(detail.job).toMatchObject({ status: 'completed', processed: 25, downloadable: true });
    expect(detail.counts).toEqual({
      by_status: { deliverable: 9, undeliverable: 8, risky: 8, unknown: 0 },
      by_reason: { smtp_rejected: 8, disposable_domain: 8 },
    });

    const download = await browser.get(`${API}/jobs/${job.job_id}/download?verdicts=deliverable`);
    expect(download.statusCode).toBe(200);
    expect(download.headers['content-type']).toBe('text/csv; charset=utf-8');
    expect(download.headers['content-disposition']).toBe('attachment; filename="customers-deliverable.csv"');
    const out = parseCsv(download.body);
    expect(out[0]).toEqual([
      'name',
      'email',
      'note',
      'city',
      'status',
      'score',
      'reason',
      'did_you_mean',
      'provider',
    ]);
    const expected = rows.filter((_, i) => i % 3 === 0).map((r) => [...r, 'deliverable', '99', '', '', '']);
    expect(out.slice(1)).toEqual(expected);
  });

  it('downloads every row when no verdict is chosen, and several verdicts when asked', async () => {
    const { d, browser } = await setUp();
    const { csv } = customers(12);
    const { job_id } = (await upload(browser, csv)).json<JobItem>();
    await d.drain();
    const all = parseCsv((await browser.get(`${API}/jobs/${job_id}/download`)).body);
    expect(all).toHaveLength(13);
    expect(all.slice(1).map((r) => r[4])).toEqual(
      Array.from({ length: 12 }, (_, i) => ['deliverable', 'undeliverable', 'risky'][i % 3]),
    );
    const two = parseCsv(
      (await browser.get(`${API}/jobs/${job_id}/download?verdicts=risky,undeliverable`)).body,
    );
    expect(
      two
        .slice(1)
        .map((r) => r[4])
        .sort(),
    ).toEqual([...Array(4).fill('risky'), ...Array(4).fill('undeliverable')]);
    const bad = await browser.get(`${API}/jobs/${job_id}/download?verdicts=great`);
    expect(bad.statusCode).toBe(422);
  });

  it('keeps cells as uploaded and neutralises formulas only in the download', async () => {
    const { d, browser } = await setUp();
    const csv =
      'email,comment\r\nann@valid.example.com,=HYPERLINK("http://evil.example")\r\nbob@valid.example.com,+1 555\r\n';
    const { job_id } = (await upload(browser, csv, { email_column: 0 })).json<JobItem>();
    const stored = await d.runtime.ctx.db
      .selectFrom('list_upload_rows')
      .select('cells')
      .where('job_id', '=', job_id)
      .execute();
    expect(JSON.parse(stored[0]!.cells)).toEqual([['=HYPERLINK("http://evil.example")'], ['+1 555']]);
    await d.drain();
    const out = parseCsv((await browser.get(`${API}/jobs/${job_id}/download`)).body);
    expect(out.slice(1).map((r) => r[1])).toEqual([`'=HYPERLINK("http://evil.example")`, `'+1 555`]);
  });

  it('reads a file without a header row, gives back a row with no address with its verdict, and pads short rows', async () => {
    const { d, browser } = await setUp();
    const csv = 'Ann,ann@valid.example.com,vip\nnobody,,\nBob,bob@invalid.example.com\n';
    const res = await upload(browser, csv, { header: false, name: 'plain list.txt' });
    const job = res.json<JobItem>();
    expect(job.total).toBe(3);
    await d.drain();
    const download = await browser.get(`${API}/jobs/${job.job_id}/download`);
    expect(download.headers['content-disposition']).toBe('attachment; filename="plain_list-all.csv"');
    expect(parseCsv(download.body)).toEqual([
      ['column_1', 'email', 'column_3', 'status', 'score', 'reason', 'did_you_mean', 'provider'],
      ['Ann', 'ann@valid.example.com', 'vip', 'deliverable', '99', '', '', ''],
      ['nobody', '', '', 'undeliverable', '0', 'invalid_email_format', '', ''],
      ['Bob', 'bob@invalid.example.com', '', 'undeliverable', '0', 'smtp_rejected', '', ''],
    ]);
  });

  it('gives back every uploaded row, empty and malformed addresses with their verdicts, in CSV and XLSX', async () => {
    const { d, browser } = await setUp();
    // 191 rows, as in the report: 188 addresses, two empty cells and one malformed address,
    // across chunks of 10.
    const rows = Array.from({ length: 191 }, (_, i) => [
      `row ${i}`,
      i === 7 || i === 150 ? '' : i === 99 ? 'not an address' : `user${i}@${KINDS[i % 3]}.example.com`,
    ]);
    const csv = ['name,email', ...rows.map((r) => r.join(','))].join('\n');
    const job = (await upload(browser, csv)).json<JobItem>();
    expect(job.total).toBe(191);
    await d.drain();
    const download = parseCsv((await browser.get(`${API}/jobs/${job.job_id}/download`)).body);
    expect(download).toHaveLength(192);
    expect(download.slice(1).map((r) => r[0])).toEqual(rows.map((r) => r[0]));
    for (const i of [7, 150, 99])
      expect(download[i + 1]!.slice(0, 4)).toEqual([`row ${i}`, rows[i]![1], 'undeliverable', '0']);
    expect(download[8]![4]).toBe('invalid_email_format');
    const xlsx = await browser.get(`${API}/jobs/${job.job_id}/download?format=xlsx`);
    expect(xlsx.statusCode).toBe(200);
    const sheet = await readSheet<string>(xlsx.rawPayload, { parseNumber: (text) => text });
    expect(sheet.map((row) => row.map((c) => (c === null ? '' : String(c))))).toEqual(download);
  });

  it('refuses a file with no address in the column, storing nothing', async () => {
    const { d, browser } = await setUp();
    const res = await upload(browser, 'name,email\nAnn,\n', { email_column: 1 });
    expect(res.statusCode).toBe(422);
    expect(errorCode(res)).toBe('invalid_request');
    expect(res.json<{ message: string }>().message).toBe(
      'the file holds no address in column 2 below its header row',
    );
    const { db } = d.runtime.ctx;
    expect(await db.selectFrom('jobs').select('id').execute()).toEqual([]);
    expect(await db.selectFrom('list_uploads').select('id').execute()).toEqual([]);
    expect(await db.selectFrom('list_upload_rows').select('seq').execute()).toEqual([]);
  });

  it('refuses a file that is not CSV with the parser’s reason', async () => {
    const { browser } = await setUp();
    const res = await upload(browser, 'email\n"ann@valid.example.com\n', { email_column: 0 });
    expect(res.statusCode).toBe(422);
    expect(res.json<{ message: string }>().message).toMatch(/^the file is not valid CSV: /);
  });

  it('refuses more than 500,000 addresses', async () => {
    const { d, browser } = await setUp({ chunkSize: '100000' });
    const csv = `${Array.from({ length: 500_001 }, (_, i) => `u${i}@x.io`).join('\n')}\n`;
    const res = await upload(browser, csv, { email_column: 0, header: false });
    expect(res.statusCode).toBe(422);
    expect(res.json<{ message: string }>().message).toMatch(/more than 500000 addresses/);
    expect(await d.runtime.ctx.db.selectFrom('list_upload_rows').select('seq').execute()).toEqual([]);
  }, 60_000);

  it('refuses a body that is not text/csv with 415', async () => {
    const { browser } = await setUp();
    const res = await browser.request('POST', `${API}/lists?name=a&email_column=0&header=false&mode=test`, {
      body: { emails: ['ann@valid.example.com'] },
    });
    expect(res.statusCode).toBe(415);
  });

  it('counts a live list against the quota and gives back what a cancel leaves unprocessed', async () => {
    const { d, browser } = await setUp();
    const usage = async () =>
      (await d.v1('GET', '/v1/account/usage', d.liveKey)).json<{ quota: { used: number } }>().quota.used;
    const { csv } = customers(30);
    const job = (await upload(browser, csv, { mode: 'live' })).json<JobItem>();
    expect(job.mode).toBe('live');
    expect(await usage()).toBe(30);
    const cancelled = await browser.post(`jobs/${job.job_id}/cancel`);
    expect(cancelled.statusCode).toBe(200);
    expect(cancelled.json<JobItem>().status).toBe('cancelled');
    expect(await usage()).toBe(0);
  });

  it('refuses a live list larger than the quota left, storing nothing', async () => {
    const { d, browser } = await setUp({ plans: '{"free":{"monthly_quota":20}}' });
    const res = await upload(browser, customers(21).csv, { mode: 'live' });
    expect(res.statusCode).toBe(429);
    expect(errorCode(res)).toBe('quota_exceeded');
    expect(await d.runtime.ctx.db.selectFrom('list_uploads').select('id').execute()).toEqual([]);
  });

  it('lists the account’s jobs newest first with their file names', async () => {
    const { d, browser } = await setUp();
    await upload(browser, customers(3).csv, { name: 'first.csv' });
    d.manualClock.advance(1000);
    await upload(browser, customers(3).csv, { name: 'second.csv' });
    d.manualClock.advance(1000);
    await d.v1('POST', '/v1/verify/batch', d.testKey, { emails: ['ann@valid.example.com'] });
    const list = (await browser.get(`${API}/jobs`)).json<JobList>();
    expect(list.jobs.map((j) => j.name)).toEqual([null, 'second.csv', 'first.csv']);
    expect(list.jobs[0]!.has_original_columns).toBe(false);
    expect(list.next_cursor).toBeNull();
  });

  it('deletes the uploaded columns with the results when retention ends', async () => {
    const { d, browser } = await setUp({ sessionIdleTimeout: '4d' });
    const { job_id } = (await upload(browser, customers(25).csv)).json<JobItem>();
    await d.drain();
    const counted = (await browser.get(`${API}/jobs/${job_id}`)).json<JobDetail>().counts;
    expect(counted).not.toBeNull();
    d.manualClock.advance(73 * HOUR);
    await sweepOnce(d.runtime.ctx.db, d.clock);
    expect(await d.runtime.ctx.db.selectFrom('list_upload_rows').select('seq').execute()).toEqual([]);
    const res = await browser.get(`${API}/jobs/${job_id}/download`);
    expect(res.statusCode).toBe(410);
    expect(errorCode(res)).toBe('results_expired');
    // The job stays, with its name and the counts computed while the results existed.
    const detail = (await browser.get(`${API}/jobs/${job_id}`)).json<JobDetail>();
    expect(detail.job).toMatchObject({ name: 'customers.csv', downloadable: false });
    expect(detail.counts).toEqual(counted);
  });

  it('answers 404 for another account’s job, exactly as for an unknown id', async () => {
    const { d, browser } = await setUp();
    const other = await d.createOtherAccount();
    const theirs = (
      await d.v1('POST', '/v1/verify/batch', other.testKey, { emails: ['ann@valid.example.com'] })
    ).json<{ job_id: string }>();
    await d.drain();
    const strip = (body: string) => body.replace(/req_[0-9a-f]+/, 'req_');
    for (const [method, suffix] of [
      ['GET', ''],
      ['GET', '/download'],
      ['POST', '/cancel'],
    ] as const) {
      const mine = await browser.request(method, `${API}/jobs/${theirs.job_id}${suffix}`);
      const unknown = await browser.request(method, `${API}/jobs/job_doesnotexist000000${suffix}`);
      expect([mine.statusCode, unknown.statusCode]).toEqual([404, 404]);
      expect(strip(mine.body)).toBe(strip(unknown.body));
    }
  });
});
