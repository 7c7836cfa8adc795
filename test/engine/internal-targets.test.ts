/**
 * The service never probes mail hosts inside its own network unless told to: an address literal
 * or an MX record pointing at loopback/private space ends as unknown, with no connection made.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { EngineOptions } from '../../src/engine/index.js';
import { createVerifier } from '../../src/engine/index.js';
import { isInternalAddress, isLoopbackAddress } from '../../src/engine/net/internal-address.js';
import type { FakeDnsServer } from '../kit/dns-server.js';
import { startDnsServer } from '../kit/dns-server.js';
import type { SmtpKit } from '../kit/smtp-servers.js';
import { startSmtpServers } from '../kit/smtp-servers.js';

let kit: SmtpKit;
let dns: FakeDnsServer;

function options(allowInternalTargets: boolean): EngineOptions {
  return {
    dns: {
      servers: [dns.address],
      timeoutMs: 300,
      tries: 1,
      positiveTtlMs: 60_000,
      negativeTtlMs: 60_000,
      allowInternalTargets,
    },
    smtp: { port: kit.port, heloName: 'probe.test', mailFrom: 'v@probe.test', proxies: [], maxMxHosts: 3 },
    catchAllTtlMs: 60_000,
  };
}

beforeAll(async () => {
  kit = await startSmtpServers({ inside: { kind: 'mta', mailboxes: ['alice'] } });
  dns = await startDnsServer();
  dns.setDomain('inside.test', { mx: [{ exchange: 'mx.inside.test', priority: 10 }] });
  dns.setDomain('mx.inside.test', { a: [kit.hosts.inside!.ip] });
});

afterAll(async () => {
  await kit.close();
  await dns.close();
});

describe('internal probe targets', () => {
  it('classifies loopback, private, link-local and mapped addresses as internal', () => {
    for (const a of [
      '127.0.0.2',
      '10.1.2.3',
      '172.16.0.1',
      '192.168.1.1',
      '169.254.169.254',
      '100.64.0.1',
      '::1',
      'fe80::1',
      'fd00::1',
      '::ffff:10.0.0.1',
      '0.0.0.0',
    ]) {
      expect(isInternalAddress(a), a).toBe(true);
    }
    for (const a of ['8.8.8.8', '93.184.216.34', '2606:4700::1111', '::ffff:1.1.1.1']) {
      expect(isInternalAddress(a), a).toBe(false);
    }
    expect(isLoopbackAddress('::ffff:127.0.0.1')).toBe(true);
    expect(isLoopbackAddress('10.0.0.1')).toBe(false);
  });

  it('does not connect to an MX host with internal addresses when not allowed', async () => {
    const verifier = createVerifier(options(false));
    const before = kit.hosts.inside!.connections;
    const result = await verifier.verify('alice@inside.test', { timeoutMs: 1000 });
    await verifier.close();
    expect(result.status).toBe('unknown');
    expect(result.reason).toBe('smtp_unavailable');
    expect(result.valid).toBe(false);
    expect(result.mx).toBe(false);
    // The breakdown agrees with the top-level field (issue 7, defect 8).
    expect(result.checks.mx.passed).toBe(false);
    expect(result.checks.mx.error).toBe('INTERNAL_HOSTS_ONLY');
    expect(result.checks.mx.records.length).toBeGreaterThan(0);
    expect(result.checks.smtp.message).toMatch(/internal addresses are not probed/);
    expect(kit.hosts.inside!.connections).toBe(before);
  });

  it('does not connect to an internal address literal when not allowed', async () => {
    const verifier = createVerifier(options(false));
    const before = kit.hosts.inside!.connections;
    const result = await verifier.verify(`alice@[${kit.hosts.inside!.ip}]`, { timeoutMs: 1000 });
    await verifier.close();
    expect(result.status).toBe('unknown');
    expect(result.reason).toBe('smtp_unavailable');
    expect(kit.hosts.inside!.connections).toBe(before);
  });

  it('probes the same host when internal targets are allowed', async () => {
    const verifier = createVerifier(options(true));
    const result = await verifier.verify('alice@inside.test', { timeoutMs: 2000 });
    await verifier.close();
    expect(result.status).toBe('deliverable');
    expect(result.mx).toBe(true);
  });
});
