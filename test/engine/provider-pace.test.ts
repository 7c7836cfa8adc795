/**
 * The provider pace in the session broker (src/engine/sessions/provider-pace.ts), with the clock
 * standing still: the sessions single verifications open to a provider's MX host count against
 * `providerSessionsPerSecond`, so a batch to that provider waits for the next second; the single
 * verifications themselves never wait for it. Without a shared broker the batch's pace counts
 * its own sessions only, as before.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { ManualClock } from '../../src/clock.js';
import { loadConfig } from '../../src/config.js';
import { createBatchEngine } from '../../src/engine/batch/batch-engine.js';
import type { BatchEngine } from '../../src/engine/batch/types.js';
import type { Verifier } from '../../src/engine/index.js';
import { createVerifier } from '../../src/engine/index.js';
import { SessionBroker } from '../../src/engine/sessions/broker.js';
import type { EngineOptions } from '../../src/engine/types.js';
import type { FakeDnsServer } from '../kit/dns-server.js';
import { startDnsServer } from '../kit/dns-server.js';
import type { FakeMta } from '../kit/pipelining-mta.js';
import { startFakeMta } from '../kit/pipelining-mta.js';

const HOST = '127.0.16.1';
const PACE = 2;

let mta: FakeMta;
let dns: FakeDnsServer;
let engine: EngineOptions;
const closing: (Verifier | BatchEngine)[] = [];

beforeAll(async () => {
  mta = await startFakeMta({
    hosts: [HOST],
    rcpt: (address) => (address.startsWith('user') ? '250 2.1.5 OK' : `550 5.1.1 <${address}>: User unknown`),
  });
  // A Microsoft 365 tenant's MX name: the provider table puts it in Microsoft's group.
  dns = await startDnsServer({
    'tenant.test': { mx: [{ exchange: 'tenant-test.mail.protection.outlook.com', priority: 0 }] },
    'tenant-test.mail.protection.outlook.com': { a: [HOST] },
  });
  engine = loadConfig(
    { dnsServer: dns.address, smtpPort: String(mta.port), allowInternalTargets: 'true' },
    {},
  ).engine;
});

afterEach(async () => {
  await Promise.all(closing.splice(0).map((c) => c.close()));
});

afterAll(async () => {
  await mta.close();
  await dns.close();
});

/** A verifier (no warm sessions: a new connection per verification) and a batch engine on `clock`. */
function engines(
  broker: SessionBroker | null,
  clock: ManualClock,
): { verifier: Verifier; batch: BatchEngine } {
  const pace = { providerConcurrency: 100, providerSessionsPerSecond: PACE };
  const verifier = createVerifier(
    { ...engine, smtp: { ...engine.smtp, ...pace, sessions: { idleMs: 0 } } },
    { clock: () => clock.now().getTime(), ...(broker === null ? {} : { broker }) },
  );
  const batch = createBatchEngine(
    {
      ...engine,
      ...pace,
      concurrency: 10,
      perHostConcurrency: 5,
      greylistRetries: 0,
      greylistDelayMs: 20,
      timeoutMs: 3_000,
    },
    { clock, ...(broker === null ? {} : { broker }) },
  );
  closing.push(verifier, batch);
  return { verifier, batch };
}

const connections = (): number => mta.stats().connections;

describe('the provider pace, with the process’s broker', () => {
  it('counts the single verifications’ new sessions: a batch to the provider waits for the next second', async () => {
    const clock = new ManualClock();
    const { verifier, batch } = engines(new SessionBroker({ perHostConcurrency: 5 }), clock);
    const start = connections();
    for (const address of ['user-a@tenant.test', 'user-b@tenant.test'])
      expect((await verifier.verify(address)).status).toBe('deliverable');
    expect(connections()).toBe(start + PACE);

    const run = batch.verifyMany(['user-1@tenant.test', 'user-2@tenant.test']);
    // The pace's wake-up comes every (real) second: one of them finds the clock where it was.
    await sleep(1_200);
    expect(connections()).toBe(start + PACE);
    clock.advance(1_000);
    const results = await run;
    expect(results.map((r) => r.status)).toEqual(['deliverable', 'deliverable']);
    expect(connections()).toBeGreaterThan(start + PACE);
  });

  it('does not hold the single verifications back: they open sessions past the pace', async () => {
    const clock = new ManualClock();
    const { verifier } = engines(new SessionBroker({ perHostConcurrency: 5 }), clock);
    const start = connections();
    for (const address of ['user-c@tenant.test', 'user-d@tenant.test', 'user-e@tenant.test'])
      expect((await verifier.verify(address, { timeoutMs: 3_000 })).status).toBe('deliverable');
    expect(connections()).toBe(start + PACE + 1);
  });
});

describe('the provider pace, without a shared broker', () => {
  it('counts the batch’s own sessions only: the batch opens at once after single verifications', async () => {
    const clock = new ManualClock();
    const { verifier, batch } = engines(null, clock);
    const start = connections();
    for (const address of ['user-f@tenant.test', 'user-g@tenant.test'])
      expect((await verifier.verify(address)).status).toBe('deliverable');
    // The clock stands still, and the batch is not held back.
    const results = await batch.verifyMany(['user-5@tenant.test', 'user-6@tenant.test']);
    expect(results.map((r) => r.status)).toEqual(['deliverable', 'deliverable']);
    expect(connections()).toBeGreaterThan(start + PACE);
  });
});
