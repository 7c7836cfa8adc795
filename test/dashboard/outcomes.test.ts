/**
 * The Outcomes page's API (issue 27): a CSV of outcomes uploaded (its rows refused one by one with
 * their row number, the rest taken), what came in per day and per source, the accuracy report (the
 * same as v1's), and the operator console's report over every account, in aggregate only. The
 * real app on a real store (PostgreSQL with MAILVERDICT_TEST_STORE=postgres).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DAY } from '../../src/clock.js';
import { listAudit } from '../../src/services/accounts/audit.service.js';
import * as corpus from '../kit/bounce-corpus.js';
import type { AccuracyReport, OutcomeIntake, OutcomeUploadReport } from '../../src/dashboard/contract.js';
import {
  API,
  createDashboardHarness,
  errorCode,
  type Browser,
  type DashboardHarness,
} from '../kit/dashboard-kit.js';

const upload = (b: Browser, payload: string, type = 'text/csv') =>
  b.request('POST', `${API}/outcomes/upload`, { raw: { type, payload } });

describe('the Outcomes page API', () => {
  let h: DashboardHarness;
  let owner: Browser;
  let ops: Browser;
  let other: { accountId: string; liveKey: string };
  beforeAll(async () => {
    // Days pass in these tests; the sessions outlive them.
    h = await createDashboardHarness({ flags: { sessionIdleTimeout: '5d' } });
    owner = (await h.signedIn()).browser;
    ops = await h.signedInOperator('ops@example.org');
    other = await h.createOtherAccount();
  });
  afterAll(async () => {
    await h?.close();
  });

  it('takes a CSV with a header row, and refuses its bad rows by row number', async () => {
    const csv = [
      'Type,Email,At',
      'hard bounce,ann@acme.test,2026-03-10T08:00:00Z',
      'Delivered,bob@acme.test,2026-03-10T08:00:00Z',
      '',
      'bounced,cat@acme.test,2026-03-10T08:00:00Z',
      'delivered,not-an-address,2026-03-10T08:00:00Z',
      'complaint,dan@acme.test,',
    ].join('\n');
    const res = await upload(owner, csv);
    expect(res.statusCode, res.body).toBe(200);
    const report = res.json<OutcomeUploadReport>();
    expect(report).toMatchObject({ kind: 'csv', taken: 3, duplicates: 0, refused: 2 });
    expect(report.refusals.map((r) => [r.item, r.reason])).toEqual([
      [5, 'invalid_type'],
      [6, 'invalid_email'],
    ]);
    const again = (await upload(owner, csv)).json<OutcomeUploadReport>();
    // The complaint had no time: it is stamped now, which the clock has not left.
    expect(again).toMatchObject({ taken: 3, duplicates: 3 });
    const { entries } = await listAudit(h.runtime.ctx.db, h.accountId, { type: 'outcomes_uploaded' });
    // Both at the same instant of the test's clock: the log's order between them is not defined.
    expect(entries.map((e) => e.details).sort((x, y) => Number(x.duplicates) - Number(y.duplicates))).toEqual(
      [
        { kind: 'csv', taken: 3, duplicates: 0, refused: 2 },
        { kind: 'csv', taken: 3, duplicates: 3, refused: 2 },
      ],
    );
    expect(JSON.stringify(entries)).not.toContain('acme.test');
  });

  it('takes a CSV without a header as address, type and optional time', async () => {
    const res = await upload(
      owner,
      'eve@acme.test,soft_bounce\r\nfay@acme.test,OPENED,2026-03-10T09:00:00+01:00\r\n',
    );
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json<OutcomeUploadReport>()).toMatchObject({ taken: 2, refused: 0 });
  });

  it('shows what came in per day of intake and per source', async () => {
    h.manualClock.advance(DAY);
    const res = await upload(owner, 'gil@acme.test,hard_bounce,2026-03-11T08:00:00Z\n');
    expect(res.statusCode, res.body).toBe(200);
    expect(
      (
        await h.v1('POST', '/v1/outcomes', h.liveKey, {
          events: [{ email: 'hal@acme.test', type: 'delivered', at: '2026-03-11T08:00:00Z' }],
        })
      ).statusCode,
    ).toBe(200);
    const intake = (await owner.get(`${API}/outcomes/intake?days=7`)).json<OutcomeIntake>();
    expect(intake.since).toBe('2026-03-05');
    expect(intake.total).toBe(7);
    expect(intake.by_day.map((d) => [d.day, d.total, d.by_type.hard_bounce, d.by_type.delivered])).toEqual([
      ['2026-03-11', 2, 1, 1],
      ['2026-03-10', 5, 1, 1],
    ]);
    expect(intake.by_source.map((s) => [s.source, s.total])).toEqual([
      ['upload', 6],
      ['api', 1],
    ]);
    expect(intake.by_source[0]!.by_type).toEqual({
      delivered: 1,
      hard_bounce: 2,
      soft_bounce: 1,
      complaint: 1,
      unsubscribed: 0,
      opened: 1,
      clicked: 0,
    });
    const today = (await owner.get(`${API}/outcomes/intake?days=1`)).json<OutcomeIntake>();
    expect(today.total).toBe(2);
  });

  it('takes an mbox of bounces: each bounce and complaint an event by message number, the rest reported and stored nowhere', async () => {
    const mbox = [
      `From MAILER-DAEMON Mon Mar  9 08:00:01 2026\n${corpus.postfixHardBounce({ rcpt: 'gone@mbox.test', messageId: 'm1@sender.example', lf: true })}`,
      `From jane@customer.example Mon Mar  9 09:00:00 2026\n${corpus.notABounce({ rcpt: 'reply@mbox.test', lf: true })}`,
      `From MAILER-DAEMON Mon Mar  9 08:00:05 2026\n${corpus.postfixPolicyBounce({ rcpt: 'policy@mbox.test', messageId: 'm3@sender.example', lf: true })}`,
      `From abusedesk@example.com Thu Mar  8 14:00:00 2026\n${corpus.arfComplaint({ rcpt: 'angry@mbox.test', messageId: 'm4@sender.example', lf: true })}`,
    ].join('\n');
    const res = await upload(owner, mbox, 'application/mbox');
    expect(res.statusCode, res.body).toBe(200);
    const report = res.json<OutcomeUploadReport>();
    expect(report).toMatchObject({ kind: 'mbox', taken: 2, duplicates: 0, refused: 0 });
    expect(report.mbox!.messages).toBe(4);
    expect(report.mbox!.rejected).toMatchObject([{ item: 2, error: 'not_a_bounce' }]);
    expect(report.mbox!.ignored).toMatchObject([
      { item: 3, email: 'policy@mbox.test', reason: 'sender_policy' },
    ]);
    // Stored as events of the account: by source `upload`; the same file again holds nothing new.
    const types = await h.runtime.ctx.db
      .selectFrom('outcome_events')
      .select(['type', 'source', 'domain'])
      .where('account_id', '=', h.accountId)
      .where('domain', '=', 'mbox.test')
      .orderBy('type')
      .execute();
    expect(types).toEqual([
      { type: 'complaint', source: 'upload', domain: 'mbox.test' },
      { type: 'hard_bounce', source: 'upload', domain: 'mbox.test' },
    ]);
    expect((await upload(owner, mbox, 'application/mbox')).json<OutcomeUploadReport>()).toMatchObject({
      taken: 2,
      duplicates: 2,
    });
    // An mbox with no bounce in it is refused as a whole.
    const none = await upload(
      owner,
      `From x Mon Mar  9 09:00:00 2026\n${corpus.notABounce({ rcpt: 'r@mbox.test', lf: true })}`,
      'application/mbox',
    );
    expect(none.statusCode).toBe(422);
    expect(errorCode(none)).toBe('invalid_request');
  });

  it('refuses a file of another kind with 415, and an empty file with 422', async () => {
    const json = await owner.request('POST', `${API}/outcomes/upload`, { body: { events: [] } });
    expect(json.statusCode).toBe(415);
    expect(errorCode(json)).toBe('unsupported_media_type');
    const empty = await upload(owner, '\n\n');
    expect(empty.statusCode).toBe(422);
    expect(errorCode(empty)).toBe('invalid_request');
    const badHeader = await upload(owner, 'email,when\nann@acme.test,2026-03-10T08:00:00Z\n');
    expect(badHeader.statusCode).toBe(422);
    const tooLarge = await upload(owner, 'x'.repeat(8 * 1024 * 1024 + 1));
    expect(tooLarge.statusCode).toBe(413);
    expect(errorCode(tooLarge)).toBe('payload_too_large');
  });

  it('refuses an upload without the CSRF token', async () => {
    const res = await owner.request('POST', `${API}/outcomes/upload`, {
      raw: { type: 'text/csv', payload: 'ann@acme.test,delivered\n' },
      noCsrf: true,
    });
    expect(res.statusCode).toBe(403);
    expect(errorCode(res)).toBe('csrf_rejected');
  });

  it('reads the same accuracy report as GET /v1/account/outcomes', async () => {
    const { verdictLog } = h.runtime.ctx;
    const since = h.manualClock.now();
    verdictLog.record(h.accountId, [
      { email: 'ivy@acme.test', status: 'deliverable', reason: null, score: 95, provider: 'google' },
      { email: 'jon@acme.test', status: 'risky', reason: 'catch_all', score: 55, provider: null },
    ]);
    h.manualClock.advance(DAY);
    const at = new Date(since.getTime() + 1000).toISOString();
    await upload(owner, `ivy@acme.test,hard_bounce,${at}\njon@acme.test,delivered,${at}\n`);
    const res = await owner.get(`${API}/outcomes/report`);
    expect(res.statusCode, res.body).toBe(200);
    const report = res.json<AccuracyReport>();
    expect(report.totals).toEqual({ verified: 2, sent: 2, delivered: 1, hard_bounced: 1, bounce_rate: 0.5 });
    expect(report.by_provider.map((p) => [p.provider, p.hard_bounced])).toEqual([
      ['google', 1],
      [null, 0],
    ]);
    const v1 = (await h.v1('GET', '/v1/account/outcomes', h.liveKey)).json<
      AccuracyReport & { request_id: string }
    >();
    const { request_id: _, ...sameReport } = v1;
    expect(sameReport).toEqual(report);
    const bad = await owner.get(`${API}/outcomes/report?from=2026-04-01&to=2026-03-01`);
    expect(bad.statusCode).toBe(422);
  });

  it("gives the operator every account's figures in aggregate, and nobody else", async () => {
    const { verdictLog } = h.runtime.ctx;
    const since = h.manualClock.now();
    verdictLog.record(other.accountId, [
      { email: 'kim@acme.test', status: 'deliverable', reason: null, score: 95, provider: 'google' },
    ]);
    h.manualClock.advance(DAY);
    const at = new Date(since.getTime() + 1000).toISOString();
    expect(
      (
        await h.v1('POST', '/v1/outcomes', other.liveKey, {
          events: [{ email: 'kim@acme.test', type: 'delivered', at }],
        })
      ).statusCode,
    ).toBe(200);
    const res = await ops.get(`${API}/operator/outcomes/report`);
    expect(res.statusCode, res.body).toBe(200);
    const all = res.json<AccuracyReport>();
    expect(all.totals).toEqual({ verified: 3, sent: 3, delivered: 2, hard_bounced: 1, bounce_rate: 0.3333 });
    expect(all.by_status).toEqual([
      { status: 'deliverable', verified: 2, sent: 2, delivered: 1, hard_bounced: 1, bounce_rate: 0.5 },
      { status: 'risky', verified: 1, sent: 1, delivered: 1, hard_bounced: 0, bounce_rate: 0 },
    ]);
    // The account's own report still holds only its own.
    expect((await owner.get(`${API}/outcomes/report`)).json<AccuracyReport>().totals.verified).toBe(2);
    const member = await owner.get(`${API}/operator/outcomes/report`);
    expect(member.statusCode).toBe(404);
  });

  it('refuses an upload while the account is suspended, and stores nothing', async () => {
    const suspend = await ops.request('PATCH', `${API}/operator/accounts/${h.accountId}`, {
      body: { suspended: true, reason: 'unpaid invoice' },
    });
    expect(suspend.statusCode, suspend.body).toBe(200);
    const before = (await owner.get(`${API}/outcomes/intake`)).json<OutcomeIntake>().total;
    const res = await upload(owner, 'lea@acme.test,hard_bounce,2026-03-10T08:00:00Z\n');
    expect(res.statusCode).toBe(403);
    expect(errorCode(res)).toBe('account_suspended');
    expect((await owner.get(`${API}/outcomes/intake`)).json<OutcomeIntake>().total).toBe(before);
  });
});
