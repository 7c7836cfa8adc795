/**
 * Issue 25, part 1, through the real HTTP server: with a resolver that answers NXDOMAIN for every
 * name, a live verification of a real mailbox is unknown / dns_error (never undeliverable), and
 * /readyz and /metrics say the resolver is not trusted; once it tells the truth again, both
 * recover and a real NXDOMAIN is domain_not_found again.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { systemClock } from '../../src/clock.js';
import { loadConfig } from '../../src/config.js';
import { createRuntime, startServer, type RunningServer, type Runtime } from '../../src/runtime.js';
import { bootstrapFirstAccount, type Bootstrap } from '../../src/services/accounts/bootstrap.service.js';
import { startDnsServer, type FakeDnsServer } from '../kit/dns-server.js';

const ANCHORS = ['.', 'anchor-one.test', 'anchor-two.test'];

describe('a live key against a resolver that answers NXDOMAIN for every name', () => {
  let dir: string;
  let dns: FakeDnsServer;
  let runtime: Runtime;
  let server: RunningServer;
  let keys: Bootstrap;

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'mailverdict-trust-'));
    // An empty zone: every question is NXDOMAIN, the anchors too.
    dns = await startDnsServer();
    const config = loadConfig(
      {
        dataDir: dir,
        port: '0',
        dnsServer: dns.address,
        dnsTimeout: '1s',
        dnsTries: '1',
        dnsTrustName: ANCHORS.join(','),
        dnsTrustAbsentZone: 'test',
      },
      {},
    );
    runtime = await createRuntime(config, { logger: pino({ level: 'silent' }) });
    keys = (await bootstrapFirstAccount(runtime.ctx.db, systemClock))!;
    server = await startServer(runtime);
    runtime.dnsTrust.start();
  });
  afterAll(async () => {
    await server.close();
    await runtime.close();
    await dns.close();
    rmSync(dir, { recursive: true, force: true });
  });

  const verify = async (email: string): Promise<Record<string, unknown>> => {
    const res = await fetch(`${server.url}/v1/verify`, {
      method: 'POST',
      headers: { authorization: `Bearer ${keys.live.key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ email }),
    });
    expect(res.status).toBe(200);
    return (await res.json()) as Record<string, unknown>;
  };
  const metric = async (): Promise<string | undefined> => {
    const text = await (await fetch(`${server.url}/metrics`)).text();
    return /^mailverdict_dns_resolver_trusted (\d)$/m.exec(text)?.[1];
  };

  it('answers unknown / dns_error with the explanation in checks, never undeliverable', async () => {
    for (const email of ['jane@gmail.com', 'ben@outlook.com', 'dev@yahoo.com']) {
      const body = await verify(email);
      expect(body).toMatchObject({ status: 'unknown', reason: 'dns_error', valid: false });
      expect(body.checks).toMatchObject({
        mx: { passed: null, error: 'RESOLVER_UNTRUSTED', explanation: expect.stringMatching(/--dns-server/) },
      });
    }
  });

  it('is not ready, and says why', async () => {
    const res = await fetch(`${server.url}/readyz`);
    expect(res.status).toBe(503);
    expect(await res.json()).toMatchObject({
      status: 'unavailable',
      failed: ['dns'],
      dns: { state: 'untrusted', reason: expect.stringContaining('denies 3 of 3 names that must exist') },
    });
    expect(await metric()).toBe('0');
  });

  it('recovers once the resolver tells the truth: ready, and a real NXDOMAIN is domain_not_found', async () => {
    dns.setDomain('.', { ns: ['a.root.test'] });
    for (const name of ANCHORS.slice(1))
      dns.setDomain(name, { mx: [{ exchange: `mx.${name}`, priority: 1 }] });
    expect((await runtime.dnsTrust.check()).state).toBe('trusted');

    expect((await fetch(`${server.url}/readyz`)).status).toBe(200);
    expect(await metric()).toBe('1');
    expect(await verify('jane@no-such-domain.test')).toMatchObject({
      status: 'undeliverable',
      reason: 'domain_not_found',
    });
  });
});

describe('a filtering resolver (NXDOMAIN for one anchor and for names that do not exist)', () => {
  it('stays ready, and real NXDOMAIN answers keep domain_not_found', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'mailverdict-trust-'));
    const dns = await startDnsServer({
      '.': { ns: ['a.root.test'] },
      'anchor-one.test': { mx: [{ exchange: 'mx.anchor-one.test', priority: 1 }] },
    });
    dns.setNxdomain('anchor-two.test');
    const runtime = await createRuntime(
      loadConfig(
        {
          dataDir: dir,
          port: '0',
          dnsServer: dns.address,
          dnsTrustName: ANCHORS.join(','),
          dnsTrustAbsentZone: 'test',
        },
        {},
      ),
      { logger: pino({ level: 'silent' }) },
    );
    const server = await startServer(runtime);
    try {
      const keys = (await bootstrapFirstAccount(runtime.ctx.db, systemClock))!;
      // Four: the bootstrap account may make five requests a second.
      for (let i = 0; i < 4; i++) {
        const res = await fetch(`${server.url}/v1/verify`, {
          method: 'POST',
          headers: { authorization: `Bearer ${keys.live.key}`, 'content-type': 'application/json' },
          body: JSON.stringify({ email: `someone@gone-${i}.test` }),
        });
        expect(await res.json()).toMatchObject({ status: 'undeliverable', reason: 'domain_not_found' });
      }
      expect((await fetch(`${server.url}/readyz`)).status).toBe(200);
      expect(runtime.dnsTrust.status().state).toBe('trusted');
    } finally {
      await server.close();
      await runtime.close();
      await dns.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
