/**
 * Allow and block filters through the API (issue 27, part 2): GET/POST /v1/filters, DELETE
 * /v1/filters/:id, and the verdicts they decide before any network check, in single verifications
 * and batch jobs. A real app on a real store (PostgreSQL with MAILVERDICT_TEST_STORE=postgres), the
 * real engine against the in-process DNS server and a loopback MTA, whose records say what ran.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { createKey } from '../../src/services/keys/keys.service.js';
import { errorOf, type Harness } from '../kit/api-harness.js';
import { type JobsHarness, type ResultsJson, createLiveJobsHarness } from '../kit/jobs-kit.js';
import { startSmtpServers, type SmtpKit } from '../kit/smtp-servers.js';

let kit: SmtpKit;
let h: JobsHarness;

beforeAll(async () => {
  kit = await startSmtpServers({
    mta: { kind: 'mta', mailboxes: Array.from({ length: 40 }, (_, i) => `user${i}`) },
  });
  h = await createLiveJobsHarness({
    flags: { chunkSize: '10', smtpPort: String(kit.port) },
    account: { plan: 'starter' },
  });
  for (const domain of ['acme.test', 'sub.acme.test', 'other.test', 'shop.example']) route(h, domain);
});
afterAll(async () => {
  await h?.close();
  await kit?.close();
});
beforeEach(async () => {
  kit.resetRecords();
  for (const f of (await list()).filters) await remove(f.id);
});

const mta = () => kit.hosts.mta!;
const rcpts = () => mta().commands.filter((c) => /^rcpt to:/i.test(c)).length;
const rcptsFor = (email: string) =>
  mta().commands.filter((c) => c.toLowerCase() === `rcpt to:<${email.toLowerCase()}>`).length;

function route(harness: Harness, domain: string): void {
  harness.dns.setDomain(domain, { mx: [{ exchange: `mx1.${domain}`, priority: 10 }] });
  harness.dns.setDomain(`mx1.${domain}`, { a: [mta().ip] });
}

const auth = (key = h.liveKey) => ({ authorization: `Bearer ${key}` });

interface FilterJson {
  id: string;
  action: string;
  match: string;
  value: string;
  created_at: string;
}

function add(body: unknown, key = h.liveKey) {
  return h.inject({
    method: 'POST',
    url: '/v1/filters',
    headers: { ...auth(key), 'content-type': 'application/json' },
    payload: JSON.stringify(body),
  });
}

async function filter(action: string, match: string, value: string): Promise<FilterJson> {
  const res = await add({ action, match, value });
  expect(res.statusCode, res.body).toBe(200);
  return res.json<FilterJson>();
}

async function list(key = h.liveKey): Promise<{ filters: FilterJson[] }> {
  const res = await h.inject({ method: 'GET', url: '/v1/filters', headers: auth(key) });
  expect(res.statusCode, res.body).toBe(200);
  return res.json();
}

function remove(id: string, key = h.liveKey) {
  return h.inject({ method: 'DELETE', url: `/v1/filters/${id}`, headers: auth(key) });
}

async function verify(email: string) {
  const res = await h.verify(h.liveKey, { email });
  expect(res.statusCode, res.body).toBe(200);
  return res.json<{
    status: string;
    reason: string | null;
    valid: boolean;
    score: number;
    checks: {
      filter?: { id: string; action: string; match: string; value: string };
      mx: { records: unknown[] };
    };
  }>();
}

describe('GET/POST /v1/filters, DELETE /v1/filters/:id', () => {
  it('adds, lists and deletes filters, values normalised', async () => {
    const a = await filter('block', 'domain', '@Shop.EXAMPLE.');
    h.advance(1000);
    const b = await filter('allow', 'email', 'Jane@Acme.Test');
    h.advance(1000);
    const c = await filter('block', 'tld', '.XYZ');
    expect([a.value, b.value, c.value]).toEqual(['shop.example', 'jane@acme.test', 'xyz']);
    expect((await list()).filters.map((f) => f.id)).toEqual([a.id, b.id, c.id]);
    const res = await remove(b.id);
    expect(res.statusCode, res.body).toBe(200);
    expect((await list()).filters.map((f) => f.id)).toEqual([a.id, c.id]);
    expect((await remove(b.id)).statusCode).toBe(404);
  });

  it('changes the action of a value already filtered instead of holding both', async () => {
    const first = await filter('block', 'domain', 'acme.test');
    const second = await filter('allow', 'domain', 'ACME.test');
    expect(second.id).toBe(first.id);
    expect((await list()).filters).toMatchObject([{ id: first.id, action: 'allow' }]);
  });

  it('refuses a bad value, action or match with 422 naming it', async () => {
    for (const body of [
      { action: 'block', match: 'email', value: 'not an address' },
      { action: 'block', match: 'tld', value: 'co.uk' },
      { action: 'block', match: 'domain', value: 'exa mple.com' },
      { action: 'deny', match: 'domain', value: 'example.com' },
      { action: 'block', match: 'ip', value: 'example.com' },
    ]) {
      const res = await add(body);
      expect(res.statusCode, JSON.stringify(body)).toBe(422);
      expect(errorOf(res).error).toBe('invalid_request');
    }
    expect((await list()).filters).toEqual([]);
  });

  it("keeps each account's filters to itself", async () => {
    const mine = await filter('block', 'domain', 'acme.test');
    const otherKey = (await h.createOtherAccount()).liveKey;
    expect((await list(otherKey)).filters).toEqual([]);
    expect((await remove(mine.id, otherKey)).statusCode).toBe(404);
    const res = await h.verify(otherKey, { email: 'user1@acme.test' });
    expect(res.json()).toMatchObject({ status: 'deliverable', reason: null });
  });

  it('is refused to a key without filters:write', async () => {
    const { key } = await createKey(h.runtime.ctx.db, h.clock, {
      accountId: h.accountId,
      kind: 'live',
      scopes: ['verify'],
    });
    const res = await h.inject({ method: 'GET', url: '/v1/filters', headers: auth(key) });
    expect(res.statusCode).toBe(403);
    expect(errorOf(res).error).toBe('insufficient_permissions');
  });
});

describe('verdicts decided by filters', () => {
  it('blocks an address undeliverable / blocked_by_filter with no network check', async () => {
    const f = await filter('block', 'email', 'user2@acme.test');
    const dns = h.dns.queries.length;
    const v = await verify('User2@acme.test');
    expect(v).toMatchObject({ status: 'undeliverable', reason: 'blocked_by_filter', valid: false, score: 6 });
    expect(v.checks.filter).toEqual({
      passed: false,
      id: f.id,
      action: 'block',
      match: 'email',
      value: 'user2@acme.test',
    });
    expect(h.dns.queries.length).toBe(dns);
    expect(rcpts()).toBe(0);
  });

  it('allows a domain and its subdomains deliverable / allowed_by_filter with no network check', async () => {
    await filter('allow', 'domain', 'acme.test');
    for (const email of ['user3@acme.test', 'nobody@sub.acme.test']) {
      expect(await verify(email)).toMatchObject({
        status: 'deliverable',
        reason: 'allowed_by_filter',
        valid: true,
      });
    }
    expect(rcpts()).toBe(0);
  });

  it('lets the most specific filter win: an allowed address at a blocked domain', async () => {
    await filter('block', 'domain', 'acme.test');
    await filter('allow', 'email', 'user4@acme.test');
    expect((await verify('user4@acme.test')).reason).toBe('allowed_by_filter');
    expect((await verify('user5@acme.test')).reason).toBe('blocked_by_filter');
  });

  it('blocks by top-level domain', async () => {
    await filter('block', 'tld', 'example');
    expect((await verify('user6@shop.example')).reason).toBe('blocked_by_filter');
    expect((await verify('user6@acme.test')).reason).toBeNull();
  });

  it('blocks by MX host with the MX look-up only, never the SMTP probe', async () => {
    await filter('block', 'mx', 'acme.test');
    const v = await verify('user7@other.test');
    expect(v.reason).toBeNull();
    const blocked = await verify('user7@acme.test');
    expect(blocked).toMatchObject({ status: 'undeliverable', reason: 'blocked_by_filter' });
    expect(blocked.checks.mx.records).toEqual([{ exchange: 'mx1.acme.test', priority: 10 }]);
    expect(rcptsFor('user7@acme.test')).toBe(0);
    expect(rcptsFor('user7@other.test')).toBe(1);
  });

  it('decides before the delivery outcomes: an allow filter over a hard bounce', async () => {
    await h.inject({
      method: 'POST',
      url: '/v1/outcomes',
      headers: { ...auth(), 'content-type': 'application/json' },
      payload: JSON.stringify({
        events: [{ email: 'user8@acme.test', type: 'hard_bounce', at: '2026-03-09T00:00:00Z' }],
      }),
    });
    expect((await verify('user8@acme.test')).reason).toBe('previously_bounced');
    await filter('allow', 'email', 'user8@acme.test');
    expect((await verify('user8@acme.test')).reason).toBe('allowed_by_filter');
  });

  it('applies filters in batch jobs before probing', async () => {
    await filter('block', 'domain', 'sub.acme.test');
    await filter('allow', 'email', 'user9@acme.test');
    await filter('block', 'mx', 'mx1.other.test');
    const emails = ['a@sub.acme.test', 'user9@acme.test', 'user10@other.test', 'user11@acme.test'];
    const res = await h.submit(h.liveKey, { emails, notify_email: false });
    expect(res.statusCode, res.body).toBe(202);
    await h.drain();
    const rows = (
      await h.results(h.liveKey, res.json<{ job_id: string }>().job_id, 'json')
    ).json<ResultsJson>().results;
    expect(rows.map((r) => [r.status, r.reason])).toEqual([
      ['undeliverable', 'blocked_by_filter'],
      ['deliverable', 'allowed_by_filter'],
      ['undeliverable', 'blocked_by_filter'],
      ['deliverable', null],
    ]);
    expect(['a@sub.acme.test', 'user9@acme.test', 'user10@other.test'].map(rcptsFor)).toEqual([0, 0, 0]);
    expect(rcptsFor('user11@acme.test')).toBe(1);
  });
});
