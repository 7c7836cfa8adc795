/**
 * How accurate are we? (issue 27, part 4): the verdict log written by live verifications (single
 * and batch), GET /v1/account/outcomes reading it against the outcomes reported later, its scope,
 * its period, erasure and retention. A real app on a real store (PostgreSQL with
 * MAILVERDICT_TEST_STORE=postgres), the real engine against the in-process DNS server and a
 * loopback MTA.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DAY, ManualClock } from '../../src/clock.js';
import { sweepOnce } from '../../src/jobs/sweep.js';
import { createAccount } from '../../src/services/accounts/accounts.service.js';
import { createKey } from '../../src/services/keys/keys.service.js';
import type { AccuracyReport } from '../../src/services/outcomes/report.service.js';
import { createHarness, errorOf, type Harness } from '../kit/api-harness.js';
import { type JobsHarness, createLiveJobsHarness } from '../kit/jobs-kit.js';
import { startSmtpServers, type SmtpKit } from '../kit/smtp-servers.js';

let kit: SmtpKit;

beforeAll(async () => {
  kit = await startSmtpServers({
    mta: { kind: 'mta', mailboxes: Array.from({ length: 20 }, (_, i) => `user${i}`) },
  });
});
afterAll(async () => {
  await kit?.close();
});

function route(h: Harness, domain = 'acme.test'): void {
  h.dns.setDomain(domain, { mx: [{ exchange: `mx1.${domain}`, priority: 10 }] });
  h.dns.setDomain(`mx1.${domain}`, { a: [kit.hosts.mta!.ip] });
}

type Event = { email: string; type: string; at: string };

async function report(h: Harness, events: Event[], key = h.liveKey): Promise<void> {
  const res = await h.inject({
    method: 'POST',
    url: '/v1/outcomes',
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
    payload: JSON.stringify({ events }),
  });
  expect(res.statusCode, res.body).toBe(200);
  expect(res.json<{ refused: number }>().refused).toBe(0);
}

function read(h: Harness, query = '', key = h.liveKey) {
  return h.inject({
    method: 'GET',
    url: `/v1/account/outcomes${query}`,
    headers: { authorization: `Bearer ${key}` },
  });
}

async function accuracy(h: Harness, query = '', key = h.liveKey): Promise<AccuracyReport> {
  const res = await read(h, query, key);
  expect(res.statusCode, res.body).toBe(200);
  return res.json<AccuracyReport>();
}

async function verify(
  h: Harness,
  email: string,
  key = h.liveKey,
): Promise<{ status: string; reason: string | null }> {
  const res = await h.verify(key, { email });
  expect(res.statusCode, res.body).toBe(200);
  return res.json();
}

const figures = (verified: number, sent: number, delivered: number, hardBounced: number) => ({
  verified,
  sent,
  delivered,
  hard_bounced: hardBounced,
  bounce_rate: sent === 0 ? null : Math.round((hardBounced / sent) * 10_000) / 10_000,
});

describe('GET /v1/account/outcomes after single verifications', () => {
  let h: Harness;
  const clock = new ManualClock('2026-03-10T12:00:00.000Z');
  beforeAll(async () => {
    h = await createHarness({ clock, flags: { smtpPort: String(kit.port) } });
    route(h);
    h.dns.setNxdomain('gone.test');
    // Before the verifications: a delivery that says nothing about what was answered later.
    await report(h, [{ email: 'user6@acme.test', type: 'delivered', at: '2026-03-09T08:00:00Z' }]);
    for (const n of [1, 2, 3, 4, 5, 6])
      expect((await verify(h, `user${n}@acme.test`)).status).toBe('deliverable');
    expect(await verify(h, 'nobody@acme.test')).toEqual(expect.objectContaining({ reason: 'smtp_rejected' }));
    expect(await verify(h, 'x@gone.test')).toEqual(expect.objectContaining({ reason: 'domain_not_found' }));
    clock.advance(DAY);
    await report(h, [
      { email: 'user1@acme.test', type: 'delivered', at: '2026-03-11T08:00:00Z' },
      { email: 'user2@acme.test', type: 'hard_bounce', at: '2026-03-11T08:00:00Z' },
      { email: 'User3@acme.test', type: 'opened', at: '2026-03-11T09:00:00Z' },
      { email: 'user4@acme.test', type: 'soft_bounce', at: '2026-03-11T08:00:00Z' },
      { email: 'nobody@acme.test', type: 'hard_bounce', at: '2026-03-11T08:00:00Z' },
    ]);
  });
  afterAll(async () => {
    await h?.close();
  });

  it('counts, per status and reason, the addresses verified, sent to, delivered and bounced after the verdict', async () => {
    const r = await accuracy(h);
    expect(r.from).toBe('2025-12-11T12:00:00.000Z');
    expect(r.to).toBe('2026-03-11T12:00:00.000Z');
    expect(r.totals).toEqual(figures(8, 5, 2, 2));
    expect(r.by_status).toEqual([
      { status: 'deliverable', ...figures(6, 4, 2, 1) },
      { status: 'undeliverable', ...figures(2, 1, 0, 1) },
    ]);
    expect(r.by_reason).toEqual([
      { status: 'deliverable', reason: null, ...figures(6, 4, 2, 1) },
      { status: 'undeliverable', reason: 'domain_not_found', ...figures(1, 0, 0, 0) },
      { status: 'undeliverable', reason: 'smtp_rejected', ...figures(1, 1, 0, 1) },
    ]);
    expect(r.by_status[0]!.bounce_rate).toBe(0.25);
  });

  it('groups by provider and score band, and plots each decile with a known fate', async () => {
    const r = await accuracy(h);
    expect(r.by_provider).toEqual([{ provider: null, ...figures(8, 5, 2, 2) }]);
    expect(r.by_score_band.map((b) => [b.min, b.max, b.verified, b.sent, b.hard_bounced])).toEqual([
      [0, 9, 2, 1, 1],
      [10, 39, 0, 0, 0],
      [40, 59, 0, 0, 0],
      [60, 79, 0, 0, 0],
      [80, 100, 6, 4, 1],
    ]);
    const known = r.reliability.filter((p) => p.n > 0);
    // Deliverable at a non-free domain scores 95; an SMTP rejection and a missing domain score 0 to 9.
    expect(known).toEqual([
      expect.objectContaining({ min: 0, max: 9, n: 1, delivered: 0, hard_bounced: 1, observed: 0 }),
      { min: 90, max: 100, n: 3, delivered: 2, hard_bounced: 1, predicted: 0.95, observed: 0.6667 },
    ]);
    expect(r.reliability).toHaveLength(10);
    expect(r.reliability[5]).toEqual({
      min: 50,
      max: 59,
      n: 0,
      delivered: 0,
      hard_bounced: 0,
      predicted: null,
      observed: null,
    });
  });

  it('does not log the verdicts that the account data decided (a suppression after a bounce)', async () => {
    // user2 bounced: it is now answered previously_bounced, which must not replace the deliverable verdict.
    expect((await verify(h, 'user2@acme.test')).reason).toBe('previously_bounced');
    expect((await accuracy(h)).by_status[0]).toEqual({ status: 'deliverable', ...figures(6, 4, 2, 1) });
  });

  it('keeps a verdict given again unchanged as one verdict since its first time', async () => {
    clock.advance(DAY);
    expect((await verify(h, 'user1@acme.test')).status).toBe('deliverable');
    const r = await accuracy(h);
    expect(r.by_status[0]).toEqual({ status: 'deliverable', ...figures(6, 4, 2, 1) });
  });

  it('reads only the verdicts given in the period asked', async () => {
    const before = await accuracy(h, '?from=2026-01-01&to=2026-03-10');
    expect(before.totals).toEqual(figures(0, 0, 0, 0));
    expect(before.by_status).toEqual([]);
    const r = await accuracy(h, '?from=2026-03-10T00:00:00Z&to=2026-03-10T13:00:00%2B01:00');
    expect(r.from).toBe('2026-03-10T00:00:00.000Z');
    expect(r.to).toBe('2026-03-10T12:00:00.000Z');
    // Both ends are included; user1's verdict was last given on 2026-03-12.
    expect(r.totals.verified).toBe(7);
    expect(
      (await accuracy(h, '?from=2026-03-10T00:00:00Z&to=2026-03-10T11:59:59.999Z')).totals.verified,
    ).toBe(0);
  });

  it('refuses a period that does not parse, runs backwards or is longer than 730 days, with 422', async () => {
    for (const query of [
      '?from=yesterday',
      '?to=2026-03-10T12:00:00',
      '?from=2026-03-10&to=2026-03-01',
      '?from=2020-01-01',
    ]) {
      const res = await read(h, query);
      expect(res.statusCode, query).toBe(422);
      expect(errorOf(res).error).toBe('invalid_request');
    }
  });

  it('answers a test key with the same shape and every count 0', async () => {
    const r = await accuracy(h, '', h.testKey);
    expect(r.totals).toEqual(figures(0, 0, 0, 0));
    expect(r.by_status).toEqual([]);
    expect(r.by_score_band).toHaveLength(5);
    expect(r.reliability).toHaveLength(10);
  });

  it('needs the outcomes:read scope', async () => {
    const { key } = await createKey(h.runtime.ctx.db, h.clock, {
      accountId: h.accountId,
      kind: 'live',
      scopes: ['verify'],
    });
    const res = await read(h, '', key);
    expect(res.statusCode).toBe(403);
    expect(errorOf(res).error).toBe('insufficient_permissions');
  });

  it("never counts another account's outcomes, nor shows it this account's verdicts", async () => {
    const other = await createAccount(h.runtime.ctx.db, h.clock, {
      email: 'second@example.org',
      rateLimit: 1000,
    });
    const { key } = await createKey(h.runtime.ctx.db, h.clock, { accountId: other.id, kind: 'live' });
    await report(h, [{ email: 'user5@acme.test', type: 'hard_bounce', at: '2026-03-12T08:00:00Z' }], key);
    expect((await accuracy(h, '', key)).totals).toEqual(figures(0, 0, 0, 0));
    expect((await accuracy(h)).by_status[0]).toEqual({ status: 'deliverable', ...figures(6, 4, 2, 1) });
  });

  it("erases an address's verdict with its outcomes (DELETE /v1/outcomes)", async () => {
    const res = await h.inject({
      method: 'DELETE',
      url: `/v1/outcomes?email=${encodeURIComponent('user2@acme.test')}`,
      headers: { authorization: `Bearer ${h.liveKey}` },
    });
    expect(res.statusCode, res.body).toBe(200);
    expect((await accuracy(h)).by_status[0]).toEqual({ status: 'deliverable', ...figures(5, 3, 2, 0) });
  });

  it('prunes verdicts older than the outcome retention in the retention sweep', async () => {
    clock.advance(731 * DAY);
    const swept = await sweepOnce(h.runtime.ctx.db, h.clock);
    expect(swept.verdicts).toBe(7);
  });
});

describe('the verdicts of batch jobs', () => {
  let h: JobsHarness;
  beforeAll(async () => {
    h = await createLiveJobsHarness({
      flags: { chunkSize: '10', smtpPort: String(kit.port) },
      account: { plan: 'starter' },
    });
    route(h);
  });
  afterAll(async () => {
    await h?.close();
  });

  it('are logged like single verifications and read back in the report', async () => {
    await report(h, [{ email: 'user10@acme.test', type: 'hard_bounce', at: '2026-03-09T08:00:00Z' }]);
    const emails = ['user10@acme.test', 'user11@acme.test', 'user12@acme.test', 'ghost@acme.test'];
    const res = await h.submit(h.liveKey, { emails, notify_email: false });
    expect(res.statusCode).toBe(202);
    await h.drain();
    (h.clock as ManualClock).advance(DAY);
    await report(h, [
      { email: 'user11@acme.test', type: 'delivered', at: '2026-03-11T08:00:00Z' },
      { email: 'user12@acme.test', type: 'hard_bounce', at: '2026-03-11T08:00:00Z' },
      { email: 'ghost@acme.test', type: 'hard_bounce', at: '2026-03-11T08:00:00Z' },
    ]);
    const r = await accuracy(h);
    // user10 was answered previously_bounced from the account's data: not logged.
    expect(r.by_reason).toEqual([
      { status: 'deliverable', reason: null, ...figures(2, 2, 1, 1) },
      { status: 'undeliverable', reason: 'smtp_rejected', ...figures(1, 1, 0, 1) },
    ]);
  });
});
