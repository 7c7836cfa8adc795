/**
 * Disposable by MX host in the batch engine (issue 10, part 3): `verifyMany` flags a domain on no
 * list whose MX host is a disposable provider's, exactly as the single verifier does, and never
 * opens a session to it.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config.js';
import { createBatchEngine } from '../../src/engine/batch/batch-engine.js';
import type { BatchEngine } from '../../src/engine/batch/types.js';
import { startDnsServer, type FakeDnsServer } from '../kit/dns-server.js';
import { startSmtpServers, type SmtpKit } from '../kit/smtp-servers.js';

let kit: SmtpKit;
let dns: FakeDnsServer;
let engine: BatchEngine;

beforeAll(async () => {
  kit = await startSmtpServers({ mta: { kind: 'mta', mailboxes: ['anna', 'bob'] } });
  dns = await startDnsServer();
  for (const [domain, exchange] of [
    ['fresh-throwaway.test', 'mail.mailinator.com'],
    ['ordinary.test', 'mx1.ordinary.test'],
  ] as const) {
    dns.setDomain(domain, { mx: [{ exchange, priority: 10 }] });
    dns.setDomain(exchange, { a: [kit.hosts.mta!.ip] });
  }
  const config = loadConfig(
    { dnsServer: dns.address, smtpPort: String(kit.port), allowInternalTargets: 'true' },
    {},
  );
  engine = createBatchEngine({
    ...config.engine,
    concurrency: 4,
    perHostConcurrency: 2,
    greylistRetries: 0,
    greylistDelayMs: 20,
    timeoutMs: 2000,
  });
});

afterAll(async () => {
  await engine?.close();
  await kit?.close();
  await dns?.close();
});

describe('disposable by MX host in verifyMany', () => {
  it('flags the domain by its MX host and never probes it, while an ordinary domain is probed', async () => {
    const [fresh, other, ordinary] = await engine.verifyMany([
      'anna@fresh-throwaway.test',
      'bob@fresh-throwaway.test',
      'anna@ordinary.test',
    ]);
    for (const result of [fresh!, other!]) {
      expect(result).toMatchObject({ status: 'risky', reason: 'disposable_domain', disposable: true });
      expect(result.checks.disposable).toEqual({
        passed: false,
        value: true,
        signal: 'mx_host',
        mx_host: 'mail.mailinator.com',
      });
    }
    expect(ordinary).toMatchObject({ status: 'deliverable', disposable: false });
    expect(ordinary!.checks.disposable).toMatchObject({ signal: null });
    const rcpts = kit.hosts.mta!.commands.filter((line) => line.startsWith('RCPT'));
    expect(rcpts.some((line) => line.includes('fresh-throwaway.test'))).toBe(false);
  });
});
