/**
 * Provider-wide politeness (docs/batch-engine.md): six loopback MX hosts whose names are
 * Microsoft 365 tenants' (`tenantN.mail.protection.outlook.com`), so the provider table makes
 * them one provider, and a fast pipelining MTA on them that counts the connections open at once
 * on all six together as the server sees them. `describeProviderPoliteness` is the specification,
 * run on the in-process coordination (test/engine) and on Redis (test/redis).
 */
import { afterEach, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config.js';
import type { EngineCoordination } from '../../src/engine/coordination.js';
import { createBatchEngine, type BatchEngineDeps } from '../../src/engine/batch/batch-engine.js';
import type { BatchEngine, BatchEngineOptions } from '../../src/engine/batch/types.js';
import { createVerifier } from '../../src/engine/verifier.js';
import type { SmtpOptions, Verifier } from '../../src/engine/types.js';
import type { FakeMta } from '../kit/pipelining-mta.js';
import { startFakeMta } from '../kit/pipelining-mta.js';
import type { FakeDnsServer } from '../kit/dns-server.js';
import { startDnsServer } from '../kit/dns-server.js';
import { statuses } from './politeness-kit.js';

export const PROVIDER_HOSTS = Array.from({ length: 6 }, (_, i) => `127.0.6.${i + 1}`);
export const PER_HOST_CAP = 2;
export const PROVIDER_CAP = 3;
const TENANTS = 12;

export interface ProviderWorld {
  mta: FakeMta;
  dns: FakeDnsServer;
  /** `tenant` domains name provider MX hosts; `plain` domains the same hosts under other names. */
  engine(
    coordination: EngineCoordination | undefined,
    overrides?: Partial<BatchEngineOptions>,
    deps?: BatchEngineDeps,
  ): BatchEngine;
  /** A single-verification engine (warm sessions on) with the same caps as `engine`. */
  verifier(smtp?: Partial<SmtpOptions>): Verifier;
  /** `count` addresses over the tenants' domains (`tenant`) or the same hosts' plain ones. */
  list(count: number, kind?: 'tenant' | 'plain', parts?: number): string[][];
  /** Most connections open at once on the six hosts together. */
  peak(): number;
  close(): Promise<void>;
}

export async function providerWorld(latencyMs = 10): Promise<ProviderWorld> {
  const mta = await startFakeMta({
    hosts: PROVIDER_HOSTS,
    latencyMs,
    // "user" mailboxes exist; the catch-all probes' made-up ones do not.
    rcpt: (address) => (address.startsWith('user') ? '250 2.1.5 OK' : `550 5.1.1 <${address}>: User unknown`),
  });
  const dns = await startDnsServer();
  for (let i = 0; i < TENANTS; i++) {
    const ip = PROVIDER_HOSTS[i % PROVIDER_HOSTS.length]!;
    const tenantMx = `tenant${i}-test.mail.protection.outlook.com`;
    dns.setDomain(tenantMx, { a: [ip] });
    dns.setDomain(`tenant${i}.test`, { mx: [{ exchange: tenantMx, priority: 0 }] });
    dns.setDomain(`mx${i}.plain.test`, { a: [ip] });
    dns.setDomain(`plain${i}.test`, { mx: [{ exchange: `mx${i}.plain.test`, priority: 10 }] });
  }
  const config = loadConfig(
    { dnsServer: dns.address, smtpPort: String(mta.port), allowInternalTargets: 'true' },
    {},
  );
  const engines: { close(): Promise<void> }[] = [];
  return {
    mta,
    dns,
    engine(coordination, overrides = {}, deps = {}) {
      const engine = createBatchEngine(
        {
          ...config.engine,
          concurrency: 50,
          perHostConcurrency: PER_HOST_CAP,
          providerConcurrency: PROVIDER_CAP,
          // High enough that only the cap holds here; the pace has its own test.
          providerSessionsPerSecond: 1000,
          greylistRetries: 0,
          greylistDelayMs: 20,
          timeoutMs: 2000,
          hostBackoffMs: 10,
          // Short sessions that open as soon as one address waits: each engine alone would keep
          // every host at its cap (6 × 2 sessions).
          itemsPerSession: 1,
          recipientsPerSession: 4,
          ...overrides,
        },
        { ...(coordination ? { coordination } : {}), ...deps },
      );
      engines.push(engine);
      return engine;
    },
    verifier(smtp = {}) {
      const verifier = createVerifier({
        ...config.engine,
        smtp: {
          ...config.engine.smtp,
          concurrency: 50,
          perHostConcurrency: PER_HOST_CAP,
          providerConcurrency: PROVIDER_CAP,
          providerSessionsPerSecond: 1000,
          ...smtp,
        },
      });
      engines.push(verifier);
      return verifier;
    },
    list(count, kind = 'tenant', parts = 1) {
      const out: string[][] = Array.from({ length: parts }, () => []);
      for (let i = 0; i < count; i++) out[i % parts]!.push(`user${i}@${kind}${i % TENANTS}.test`);
      return out;
    },
    peak: () => mta.peakConnectedAcross(PROVIDER_HOSTS),
    async close() {
      await Promise.all(engines.map((e) => e.close()));
      await mta.close();
      await dns.close();
    },
  };
}

export interface ProviderCoordinations {
  /** The coordination of one more engine (a worker process of its own). */
  next(): Promise<EngineCoordination>;
  close(): Promise<void>;
}

/** What engines sharing a coordination keep to at one provider, whatever holds the coordination. */
export function describeProviderPoliteness(label: string, open: () => ProviderCoordinations): void {
  describe(`provider-wide politeness (${label})`, () => {
    const cleanups: (() => Promise<void>)[] = [];
    afterEach(async () => {
      for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
    });

    it('three engines open at most the provider cap of sessions to all its MX hosts together', async () => {
      const world = await providerWorld();
      const coordinations = open();
      cleanups.push(
        () => coordinations.close(),
        () => world.close(),
      );
      const lists = world.list(240, 'tenant', 3);
      const engines = await Promise.all(lists.map(async () => world.engine(await coordinations.next())));
      const results = await Promise.all(engines.map((engine, i) => engine.verifyMany(lists[i]!)));

      expect(statuses(results.flat())).toEqual({ 'deliverable/-': 240 });
      for (const result of results.flat()) expect(result.checks.mx.provider).toBe('microsoft');
      expect(world.peak()).toBeLessThanOrEqual(PROVIDER_CAP);
      // The hosts were all asked: the cap spreads over them, it does not pick one.
      for (const host of PROVIDER_HOSTS)
        expect(world.mta.stats().connectionsByHost[host] ?? 0).toBeGreaterThan(0);
    });
  });
}
