/**
 * An IPv6 `--source-address` end to end, over ::1: the engine (single prober and batch engine)
 * binds its connections to ::1 and reaches a Postfix-like mail host listening on ::1, which sees
 * the client as ::1; `doctor` checks that egress (port 25, reverse DNS in ip6.arpa, SPF `ip6:`,
 * a DNSBL's nibble name); and the reputation guard lists and rests it.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig, type Config } from '../../src/config.js';
import { createBatchEngine } from '../../src/engine/batch/batch-engine.js';
import { dnsblQueryName } from '../../src/engine/dns/dnsbl.js';
import { reverseName } from '../../src/engine/dns/lookups.js';
import { createLocalEgressHealth } from '../../src/engine/egress/egress-health.js';
import { createVerifier } from '../../src/engine/verifier.js';
import { runDoctor } from '../../src/services/prober/doctor.service.js';
import { createEgressGuard } from '../../src/services/prober/egress-guard.service.js';
import { startDnsServer, type FakeDnsServer } from '../kit/dns-server.js';
import { startPostfixLikeMta, type PostfixLikeMta } from '../kit/postfix-like-mta.js';

let dns: FakeDnsServer;
let mta: PostfixLikeMta;
let config: Readonly<Config>;

beforeAll(async () => {
  mta = await startPostfixLikeMta({
    hosts: ['::1'],
    inFlowDelayMs: 0,
    record: true,
    rcpt: (address) =>
      address.startsWith('user')
        ? '250 2.1.5 Ok'
        : `550 5.1.1 <${address}>: Recipient address rejected: User unknown`,
  });
  dns = await startDnsServer({
    'v6.test': { mx: [{ exchange: 'mx.v6.test', priority: 10 }] },
    'mx.v6.test': { aaaa: ['::1'] },
    'prober.test': { mx: [{ exchange: 'mx.v6.test', priority: 10 }], txt: ['v=spf1 ip6:::1 -all'] },
    'out6.prober.test': { aaaa: ['::1'] },
    [reverseName('::1')]: { ptr: ['out6.prober.test'] },
    [dnsblQueryName('::1', 'bl.test')]: { a: ['127.0.0.2'] },
  });
  config = loadConfig(
    {
      dnsServer: dns.address,
      smtpPort: String(mta.port),
      allowInternalTargets: 'true',
      sourceAddress: '::1=out6.prober.test',
      mailFrom: 'verify@prober.test',
      referenceDomain: 'v6.test',
      dnsblZone: 'bl.test,clean.test',
    },
    {},
  );
});
afterAll(async () => {
  await mta.close();
  await dns.close();
});

describe('an IPv6 source address', () => {
  it('carries single verifications and batches to a mail host on ::1, seen there as ::1', async () => {
    const verifier = createVerifier(config.engine);
    const engine = createBatchEngine({
      ...config.engine,
      concurrency: 4,
      perHostConcurrency: 2,
      greylistRetries: 0,
      greylistDelayMs: 10,
      timeoutMs: 2000,
    });
    try {
      expect((await verifier.verify('user1@v6.test')).status).toBe('deliverable');
      const results = await engine.verifyMany(['user2@v6.test', 'nobody@v6.test']);
      expect(results.map((r) => r.status)).toEqual(['deliverable', 'undeliverable']);
    } finally {
      await verifier.close();
      await engine.close();
    }
    const stats = mta.stats();
    expect(Object.keys(stats.sessionsByClient)).toEqual(['::1']);
    const helo = stats.records.flatMap((r) => r.exchanges).find((e) => e.command.startsWith('EHLO '));
    expect(helo?.command).toBe('EHLO out6.prober.test');
  });

  it('is checked by doctor: port 25, reverse DNS, SPF and blocklists over IPv6', async () => {
    const report = await runDoctor({
      engine: config.engine,
      doctor: config.doctor,
      dnsTrust: config.dnsTrust,
      timeoutMs: 2000,
    });
    const status = (id: string) => report.checks.filter((c) => c.id === id).map((c) => [c.egress, c.status]);
    expect(status('port25')).toEqual([['::1', 'pass']]);
    expect(status('reverse_dns')).toEqual([['::1', 'pass']]);
    expect(status('helo_matches_reverse_dns')).toEqual([['::1', 'pass']]);
    expect(status('spf')).toEqual([['::1', 'pass']]);
    expect(status('dnsbl')).toEqual([
      ['::1', 'fail'],
      ['::1', 'pass'],
    ]);
  });

  it('is listed and rested by the reputation guard', async () => {
    const guard = createEgressGuard(config, { store: createLocalEgressHealth(), now: Date.now });
    try {
      await guard.tick();
      expect(guard.statuses()).toMatchObject([
        { egress: '::1', state: 'listed', reason: 'listed on bl.test (127.0.0.2)' },
      ]);
      expect(guard.usable('::1')).toBe(false);
    } finally {
      await guard.stop();
    }
  });
});
