/**
 * A resolver that lies must never make real mailboxes undeliverable (issue 25, part 1): the trust
 * monitor's judgement against in-process DNS servers that answer NXDOMAIN for everything, for a
 * few names (a filtering resolver), or invent answers; and what the verifier and the batch engine
 * answer meanwhile.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createBatchEngine } from '../../src/engine/batch/batch-engine.js';
import { DnsLookups } from '../../src/engine/dns/lookups.js';
import {
  ResolverTrustMonitor,
  RESOLVER_UNTRUSTED,
  type ResolverTrustOptions,
} from '../../src/engine/dns/resolver-trust.js';
import { createVerifier, restsOnUntrustedResolver } from '../../src/engine/verifier.js';
import type { Verifier } from '../../src/engine/types.js';
import { startDnsServer, type FakeDnsServer } from '../kit/dns-server.js';
import { kitEngineOptions } from '../kit/engine-options.js';

/** The probe set of these tests: their own zone (no real root on loopback). */
const ANCHORS = ['.', 'anchor-one.test', 'anchor-two.test', 'anchor-three.test'];
const TRUST: ResolverTrustOptions = { names: ANCHORS, absentZone: 'test', intervalMs: 60_000 };

let dns: FakeDnsServer;
let lookups: DnsLookups;
let now: number;
const closers: (() => Promise<void> | void)[] = [];

function monitor(options: Partial<ResolverTrustOptions> = {}, random = Math.random): ResolverTrustMonitor {
  const trust = new ResolverTrustMonitor(
    { ...TRUST, ...options },
    { query: (name, type) => lookups.query(name, type), now: () => now, random },
  );
  closers.push(() => trust.stop());
  return trust;
}

function verifierWith(trust: ResolverTrustMonitor): Verifier {
  const verifier = createVerifier(kitEngineOptions(dns.address, 1), { trust });
  closers.push(() => verifier.close());
  return verifier;
}

/** The zone of a resolver that tells the truth about the anchors. */
function answerAnchors(): void {
  dns.setDomain('.', { ns: ['a.root-servers.test'] });
  for (const name of ANCHORS.slice(1))
    dns.setDomain(name, { mx: [{ exchange: `mx.${name}`, priority: 10 }] });
}

beforeEach(async () => {
  now = Date.parse('2026-11-28T12:00:00Z');
  dns = await startDnsServer();
  lookups = new DnsLookups({ servers: [dns.address], timeoutMs: 500, tries: 1 });
  closers.push(
    () => lookups.close(),
    () => dns.close(),
  );
});

afterEach(async () => {
  for (const close of closers.splice(0).reverse()) await close();
});

describe('a resolver that answers NXDOMAIN for every name', () => {
  it('is judged untrusted, with the names it denied', async () => {
    const status = await monitor().check();
    expect(status.state).toBe('untrusted');
    expect(status.reason).toContain('denies 4 of 4 names that must exist');
    expect(
      status.probes.filter((p) => p.expect === 'exists').map((p) => [p.name, p.type, p.outcome]),
    ).toEqual([
      ['.', 'NS', 'denied'],
      ['anchor-one.test', 'MX', 'denied'],
      ['anchor-two.test', 'MX', 'denied'],
      ['anchor-three.test', 'MX', 'denied'],
    ]);
  });

  it('makes real mailboxes unknown / dns_error with an explanation, never undeliverable', async () => {
    const verifier = verifierWith(monitor());
    for (const email of ['jane@gmail.com', 'ben@outlook.com', 'dev@yahoo.com']) {
      const result = await verifier.verify(email);
      expect(result).toMatchObject({ status: 'unknown', reason: 'dns_error', valid: false });
      expect(result.checks.mx).toMatchObject({ passed: null, error: RESOLVER_UNTRUSTED });
      expect(result.checks.mx.explanation).toMatch(/not trusted.*--dns-server/);
      expect(restsOnUntrustedResolver(result)).toBe(true);
    }
  });

  it('caches no negative answer: once trusted, the domain is asked again and then believed', async () => {
    const trust = monitor();
    const verifier = verifierWith(trust);
    expect((await verifier.verify('jane@gone.test')).reason).toBe('dns_error');
    expect((await verifier.verify('jane@gone.test')).reason).toBe('dns_error');
    const asked = dns.queryCount('gone.test', 'MX');
    expect(asked).toBe(2);

    answerAnchors();
    expect((await trust.check()).state).toBe('trusted');
    const result = await verifier.verify('jane@gone.test');
    expect(result).toMatchObject({ status: 'undeliverable', reason: 'domain_not_found' });
    expect(result.checks.mx.explanation).toBeUndefined();
    expect(dns.queryCount('gone.test', 'MX')).toBe(asked + 1);
  });

  it('checks before believing the first negative answer when no check ran yet', async () => {
    const trust = monitor();
    expect(trust.status().state).toBe('unchecked');
    const verifier = verifierWith(trust);
    expect((await verifier.verify('jane@gmail.com')).reason).toBe('dns_error');
    expect(trust.status().state).toBe('untrusted');
  });

  it('lets whenTrusted() waiters go once a later check trusts the resolver', async () => {
    const trust = monitor();
    await trust.check();
    const events: string[] = [];
    const waiting = trust.whenTrusted().then(() => events.push('trusted'));
    await trust.check();
    expect(events).toEqual([]);
    answerAnchors();
    await trust.check();
    await waiting;
    expect(events).toEqual(['trusted']);
  });

  it('settles a batch as unknown / dns_error and shares no negative answer', async () => {
    const trust = monitor();
    const engine = createBatchEngine(
      {
        ...kitEngineOptions(dns.address, 1),
        concurrency: 4,
        perHostConcurrency: 2,
        greylistRetries: 0,
        greylistDelayMs: 0,
        timeoutMs: 1000,
      },
      { trust },
    );
    closers.push(() => engine.close());
    const results = await engine.verifyMany([
      'a@gmail.com',
      'b@outlook.com',
      'c@yahoo.com',
      'd@icloud.com',
      'bad',
    ]);
    expect(results.map((r) => r.reason)).toEqual([
      'dns_error',
      'dns_error',
      'dns_error',
      'dns_error',
      'invalid_email_format',
    ]);
    expect(results.slice(0, 4).every(restsOnUntrustedResolver)).toBe(true);
  });
});

describe('a filtering resolver (NXDOMAIN for a few names, the truth for the rest)', () => {
  beforeEach(() => {
    answerAnchors();
    // It filters one of the anchors, and knows nothing of nx-domain.test (a real NXDOMAIN).
    dns.setNxdomain('anchor-two.test');
  });

  it('stays trusted', async () => {
    const status = await monitor().check();
    expect(status.state).toBe('trusted');
    expect(status.probes.find((p) => p.name === 'anchor-two.test')?.outcome).toBe('denied');
  });

  it('keeps real NXDOMAIN answers domain_not_found, however many come', async () => {
    const trust = monitor({ burstCount: 3, minRecheckMs: 0 });
    const verifier = verifierWith(trust);
    for (let i = 0; i < 6; i++) {
      const result = await verifier.verify(`user@nx-${i}.test`);
      expect(result).toMatchObject({ status: 'undeliverable', reason: 'domain_not_found' });
    }
    expect(trust.status().state).toBe('trusted');
    // The burst of NXDOMAIN answers made the monitor look again (and again find the truth).
    expect(dns.queryCount('anchor-one.test', 'MX')).toBeGreaterThan(1);
  });
});

describe('a resolver that goes bad while the service runs', () => {
  it('is re-checked on a burst of NXDOMAIN answers, and its negative answers stop being believed', async () => {
    answerAnchors();
    const trust = monitor({ burstCount: 3, burstWindowMs: 10_000, minRecheckMs: 30_000 });
    const verifier = verifierWith(trust);
    expect((await trust.check()).state).toBe('trusted');
    expect((await verifier.verify('x@cached-gone.test')).reason).toBe('domain_not_found');

    // The resolver breaks: every name is NXDOMAIN now.
    for (const name of ANCHORS) dns.remove(name);
    now += 31_000;
    const reasons: string[] = [];
    for (let i = 0; i < 4; i++) reasons.push((await verifier.verify(`user@real-${i}.test`)).reason ?? 'none');
    // The third negative answer in the window triggered the check; it and those after it wait for it.
    expect(reasons).toEqual(['domain_not_found', 'domain_not_found', 'dns_error', 'dns_error']);
    expect(trust.status().state).toBe('untrusted');
    // The negative answer cached while trusted is not given again.
    expect((await verifier.verify('x@cached-gone.test')).reason).toBe('dns_error');
  });
});

describe('a resolver that invents answers', () => {
  it('is judged untrusted when the name that must not exist resolves', async () => {
    answerAnchors();
    const random = (): number => 0.5;
    const label = `mv-absent-${Math.floor(0.5 * 2 ** 48).toString(36)}.test`;
    dns.setDomain(label, { a: ['192.0.2.1'] });
    const status = await monitor({}, random).check();
    expect(status.state).toBe('untrusted');
    expect(status.reason).toContain(label);
  });
});

describe('a resolver that does not answer', () => {
  it('is unreachable, and its negative answers are not believed either', async () => {
    for (const name of ANCHORS) dns.setServfail(name);
    const trust = monitor();
    expect((await trust.check()).state).toBe('unreachable');
    expect(await trust.believeNegative()).toBe(false);
  });
});

describe('with the monitor off', () => {
  it('believes every answer and asks nothing', async () => {
    const trust = monitor({ intervalMs: 0 });
    const verifier = verifierWith(trust);
    expect((await verifier.verify('jane@gone.test')).reason).toBe('domain_not_found');
    expect(trust.status().state).toBe('off');
    expect(dns.queryCount('anchor-one.test')).toBe(0);
  });
});
