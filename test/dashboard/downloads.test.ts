/**
 * The dashboard's downloads people act on (docs/dashboard.md, "Lists: upload and download"): the
 * file's own columns then status, score, reason and did_you_mean; the same rows as XLSX (parsed
 * back with read-excel-file, formula-looking cells neutralised); the safe-to-send verdicts; the
 * suggested address beside the original or in its place; the v1 download unchanged. Also the
 * overview's daily usage as CSV and its overage cost.
 */
import { parse } from 'csv-parse/sync';
import { readSheet } from 'read-excel-file/node';
import { afterEach, describe, expect, it } from 'vitest';
import type { JobItem, Overview } from '../../src/dashboard/contract.js';
import { openDownload } from '../../src/services/lists/list-download.js';
import { API, createDashboardHarness, type Browser, type DashboardHarness } from '../kit/dashboard-kit.js';

const SLOW = { timeout: 60_000 };

let h: DashboardHarness | undefined;
afterEach(async () => {
  await h?.close();
  h = undefined;
});

async function setUp(
  options: Parameters<typeof createDashboardHarness>[0] = {},
): Promise<{ d: DashboardHarness; browser: Browser }> {
  h = await createDashboardHarness({ ...options, flags: { chunkSize: '10', ...options.flags } });
  const { browser } = await h.signedIn();
  return { d: h, browser };
}

/** Name, address (one mistyped), a formula-looking comment. */
const CSV = [
  'name,email,comment',
  'Ann,ann@valid.example.com,=HYPERLINK("http://evil.example")',
  'Bob,bob@invalid.example.com,+1 555',
  'Cid,cid@disposable.example.com,ok',
  'Dee,dee@gmial.com,typo',
].join('\r\n');

async function uploaded(d: DashboardHarness, browser: Browser, mode: 'test' | 'live' = 'test') {
  const q = new URLSearchParams({ name: 'people.csv', email_column: '1', header: 'true', mode });
  const res = await browser.request('POST', `${API}/lists?${q.toString()}`, {
    raw: { type: 'text/csv', payload: CSV },
  });
  expect(res.statusCode).toBe(202);
  // A live job needs the network; a test one runs here.
  if (mode === 'test') await d.drain();
  return res.json<JobItem>().job_id;
}

const csvOf = (body: string) => parse(body) as string[][];

describe('dashboard downloads', SLOW, () => {
  it('keeps the file’s columns and adds status, score, reason and did_you_mean; v1 keeps four', async () => {
    const { d, browser } = await setUp();
    const id = await uploaded(d, browser);
    const res = await browser.get(`${API}/jobs/${id}/download`);
    expect(res.statusCode).toBe(200);
    const rows = csvOf(res.body);
    expect(rows[0]).toEqual([
      'name',
      'email',
      'comment',
      'status',
      'score',
      'reason',
      'did_you_mean',
      'provider',
    ]);
    expect(rows.slice(1).map((r) => [r[0], r[1], r[2], r[6]])).toEqual([
      ['Ann', 'ann@valid.example.com', `'=HYPERLINK("http://evil.example")`, ''],
      ['Bob', 'bob@invalid.example.com', `'+1 555`, ''],
      ['Cid', 'cid@disposable.example.com', 'ok', ''],
      ['Dee', 'dee@gmial.com', 'typo', 'dee@gmail.com'],
    ]);
    const v1 = await d.v1('GET', `/v1/jobs/${id}/results?format=csv`, d.testKey);
    expect(v1.statusCode).toBe(200);
    expect(csvOf(v1.body)[0]).toEqual(['email', 'status', 'score', 'reason']);
    const json = await d.v1('GET', `/v1/jobs/${id}/results?format=json`, d.testKey);
    expect(json.json<{ results: { index: number }[] }>().results[0]).toHaveProperty('index', 0);
  });

  it('writes the same rows as XLSX with formula-looking cells neutralised', async () => {
    const { d, browser } = await setUp();
    const id = await uploaded(d, browser);
    const csv = csvOf(
      (await browser.get(`${API}/jobs/${id}/download?verdicts=deliverable,undeliverable`)).body,
    );
    const res = await browser.get(
      `${API}/jobs/${id}/download?verdicts=deliverable,undeliverable&format=xlsx`,
    );
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-type']).toBe(
      'application/vnd.openxmlformats-officedocument.spreadsheetml.sheet',
    );
    expect(res.headers['content-disposition']).toBe(
      'attachment; filename="people-deliverable+undeliverable.xlsx"',
    );
    const sheet = await readSheet<string>(res.rawPayload, { parseNumber: (text) => text });
    expect(sheet.map((row) => row.map((c) => (c === null ? '' : String(c))))).toEqual(csv);
    expect(sheet[1]![2]).toBe(`'=HYPERLINK("http://evil.example")`);
    expect(sheet).toHaveLength(3);
  });

  it('offers XLSX only up to its row limit: a bigger list is refused with 422 and downloads as CSV', async () => {
    const { d, browser } = await setUp();
    const id = await uploaded(d, browser);
    const options = { verdicts: null, format: 'xlsx' as const, corrected: null };
    const { accountId } = d;
    await expect(
      openDownload(d.runtime.ctx, accountId, id, { ...options, xlsxMaxRows: 3 }),
    ).rejects.toMatchObject({
      code: 'invalid_request',
      message: expect.stringMatching(/download as CSV only/),
    });
    const fits = await openDownload(d.runtime.ctx, accountId, id, { ...options, xlsxMaxRows: 4 });
    expect(fits.filename).toBe('people-all.xlsx');
  });

  it('keeps only the safe-to-send verdicts: deliverable, or deliverable and risky', async () => {
    const { d, browser } = await setUp();
    const id = await uploaded(d, browser);
    const statuses = async (verdicts: string) =>
      csvOf((await browser.get(`${API}/jobs/${id}/download?verdicts=${verdicts}`)).body)
        .slice(1)
        .map((r) => `${r[1]} ${r[3]}`);
    expect(await statuses('deliverable')).toEqual(['ann@valid.example.com deliverable']);
    expect(await statuses('deliverable,risky')).toEqual([
      'ann@valid.example.com deliverable',
      'cid@disposable.example.com risky',
    ]);
  });

  it('puts the suggested address beside the original or in its place', async () => {
    const { d, browser } = await setUp();
    const id = await uploaded(d, browser);
    const beside = csvOf((await browser.get(`${API}/jobs/${id}/download?corrected=beside`)).body);
    expect(beside[0]!.slice(0, 4)).toEqual(['name', 'email', 'corrected_email', 'comment']);
    expect(beside.slice(1).map((r) => r.slice(1, 3))).toEqual([
      ['ann@valid.example.com', 'ann@valid.example.com'],
      ['bob@invalid.example.com', 'bob@invalid.example.com'],
      ['cid@disposable.example.com', 'cid@disposable.example.com'],
      ['dee@gmial.com', 'dee@gmail.com'],
    ]);
    const replaced = csvOf((await browser.get(`${API}/jobs/${id}/download?corrected=replace`)).body);
    expect(replaced[0]).toEqual([
      'name',
      'email',
      'comment',
      'status',
      'score',
      'reason',
      'did_you_mean',
      'provider',
    ]);
    expect(replaced.slice(1).map((r) => [r[1], r[6]])).toEqual([
      ['ann@valid.example.com', ''],
      ['bob@invalid.example.com', ''],
      ['cid@disposable.example.com', ''],
      ['dee@gmail.com', 'dee@gmail.com'],
    ]);
    expect((await browser.get(`${API}/jobs/${id}/download?corrected=maybe`)).statusCode).toBe(422);
  });

  it('offers the daily usage as CSV and the overage cost so far when overage is on', async () => {
    const { d, browser } = await setUp({
      account: { plan: 'growth' },
      flags: { plans: '{"growth":{"monthly_quota":2,"overage_rate_per_verification":0.25}}' },
    });
    await uploaded(d, browser, 'live');
    const o = (await browser.get(`${API}/overview`)).json<Overview>();
    expect(o.usage.overage).toMatchObject({ enabled: true, current_overage_count: 2 });
    expect(o.overage_cost).toBe(0.5);
    const res = await browser.get(`${API}/overview/daily.csv`);
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-disposition']).toBe('attachment; filename="daily-usage.csv"');
    const rows = csvOf(res.body);
    expect(rows[0]).toEqual(['date', 'period', 'single', 'batch', 'total']);
    expect(rows).toHaveLength(1 + o.daily.previous.length + o.daily.current.length);
    expect(rows.find((r) => r[0] === '2026-03-10')).toEqual(['2026-03-10', 'current', '0', '4', '4']);
    expect(rows[1]).toEqual([o.daily.previous[0]!.date, 'previous', '0', '0', '0']);
  });

  it('has no overage cost when overage is off', async () => {
    const { browser } = await setUp();
    const o = (await browser.get(`${API}/overview`)).json<Overview>();
    expect(o.usage.overage.enabled).toBe(false);
    expect(o.overage_cost).toBeNull();
  });
});
