/**
 * Evidence for accept-all addresses and the calibrated score (issue 27, part 3), through the API
 * and a batch job: a real app on a real store (PostgreSQL with MAILVERDICT_TEST_STORE=postgres),
 * the real engine against the in-process DNS server and a loopback MTA that accepts every mailbox.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DAY } from '../../src/clock.js';
import { type JobsHarness, type ResultsJson, createLiveJobsHarness } from '../kit/jobs-kit.js';
import { startSmtpServers, type SmtpKit } from '../kit/smtp-servers.js';

let kit: SmtpKit;
let h: JobsHarness;

beforeAll(async () => {
  kit = await startSmtpServers({ all: { kind: 'mta', catchAll: true } });
  h = await createLiveJobsHarness({
    flags: { chunkSize: '10', smtpPort: String(kit.port) },
    account: { plan: 'starter' },
  });
  for (const domain of ['good.test', 'bad.test', 'fresh.test', 'batch.test']) {
    h.dns.setDomain(domain, { mx: [{ exchange: `mx1.${domain}`, priority: 10 }] });
    h.dns.setDomain(`mx1.${domain}`, { a: [kit.hosts.all!.ip] });
  }
});
afterAll(async () => {
  await h?.close();
  await kit?.close();
});

async function report(events: { email: string; type: string; at: string }[]) {
  const res = await h.inject({
    method: 'POST',
    url: '/v1/outcomes',
    headers: { authorization: `Bearer ${h.liveKey}`, 'content-type': 'application/json' },
    payload: JSON.stringify({ events }),
  });
  expect(res.statusCode, res.body).toBe(200);
}

interface Verdict {
  status: string;
  reason: string | null;
  score: number;
  valid: boolean;
  checks: {
    history: {
      passed: boolean | null;
      decided_by: { type: string; at: string } | null;
      domain?: {
        delivered: number;
        hard_bounces: number;
        estimate: number;
        prior: { alpha: number; beta: number };
      };
    };
  };
}

async function verify(email: string): Promise<Verdict> {
  const res = await h.verify(h.liveKey, { email, fresh: true });
  expect(res.statusCode, res.body).toBe(200);
  return res.json<Verdict>();
}

const at = (daysAgo: number) => new Date(h.clock.now().getTime() - daysAgo * DAY).toISOString();

describe('evidence for accept-all addresses', () => {
  it('answers a catch-all address with a recent delivery of its own deliverable, the delivery shown', async () => {
    expect(await verify('anna@fresh.test')).toMatchObject({
      status: 'risky',
      reason: 'catch_all',
      score: 55,
    });
    await report([{ email: 'anna@fresh.test', type: 'delivered', at: at(3) }]);
    const v = await verify('anna@fresh.test');
    expect(v).toMatchObject({ status: 'deliverable', reason: null, valid: true, score: 95 });
    expect(v.checks.history).toMatchObject({ passed: true, decided_by: { type: 'delivered', at: at(3) } });
  });

  it('counts an open as evidence too, but not one older than 180 days', async () => {
    await report([
      { email: 'bert@fresh.test', type: 'opened', at: at(10) },
      { email: 'carl@fresh.test', type: 'opened', at: at(181) },
    ]);
    expect((await verify('bert@fresh.test')).status).toBe('deliverable');
    expect(await verify('carl@fresh.test')).toMatchObject({ status: 'risky', reason: 'catch_all' });
  });
});

describe('the calibrated score of catch-all addresses', () => {
  it("scores a domain by the account's deliveries and hard bounces there, within the risky band", async () => {
    const good = Array.from({ length: 200 }, (_, i) => ({
      email: `g${i}@good.test`,
      type: 'delivered',
      at: at(5),
    }));
    const bad = Array.from({ length: 40 }, (_, i) => ({
      email: `b${i}@bad.test`,
      type: i % 2 === 0 ? 'delivered' : 'hard_bounce',
      at: at(5),
    }));
    await report([
      ...good,
      { email: 'g900@good.test', type: 'hard_bounce', at: at(5) },
      { email: 'g901@good.test', type: 'hard_bounce', at: at(5) },
      ...bad,
    ]);
    const atGood = await verify('new@good.test');
    const atBad = await verify('new@bad.test');
    expect(atGood).toMatchObject({ status: 'risky', reason: 'catch_all' });
    expect(atGood.checks.history.domain).toMatchObject({
      delivered: 200,
      hard_bounces: 2,
      prior: { alpha: 9, beta: 1 },
    });
    // (200 + 9) / (202 + 10) = 0.986 -> 20 + 39 * 0.986 = 58; (20 + 9) / (40 + 10) = 0.58 -> 43.
    expect(atGood.score).toBe(58);
    expect(atBad.score).toBe(43);
    expect(atGood.score).toBeLessThan(60);
  });
});

describe('in batch jobs', () => {
  it('applies the evidence and the calibrated score to probed addresses', async () => {
    await report([
      { email: 'dora@batch.test', type: 'clicked', at: at(1) },
      ...Array.from({ length: 10 }, (_, i) => ({
        email: `x${i}@batch.test`,
        type: 'hard_bounce',
        at: at(2),
      })),
    ]);
    const res = await h.submit(h.liveKey, {
      emails: ['dora@batch.test', 'emil@batch.test'],
      notify_email: false,
    });
    expect(res.statusCode, res.body).toBe(202);
    await h.drain();
    const rows = (
      await h.results(h.liveKey, res.json<{ job_id: string }>().job_id, 'json')
    ).json<ResultsJson>().results;
    // (0 + 9) / (10 + 10) = 0.45 -> 20 + 39 * 0.45 = 37.55 -> 38.
    expect(rows.map((r) => [r.status, r.reason, r.score])).toEqual([
      ['deliverable', null, 95],
      ['risky', 'catch_all', 38],
    ]);
  });
});
