/**
 * One session broker for a process's batches and single verifications (src/engine/sessions/broker.ts),
 * counted where it matters, at a Postfix-like mail host of the kit: a large batch and concurrent
 * single verifications to the same host together stay within `--per-host-concurrency`, the
 * single verifications are answered within their timeout while the batch holds the host, and a
 * session opened for one kind serves the other.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pino from 'pino';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config.js';
import { createRuntime } from '../../src/runtime.js';
import { createBatchEngine } from '../../src/engine/batch/batch-engine.js';
import { SessionBroker } from '../../src/engine/sessions/broker.js';
import type { BatchEngine } from '../../src/engine/batch/types.js';
import type { Verifier } from '../../src/engine/index.js';
import { createVerifier } from '../../src/engine/index.js';
import type { FakeDnsServer } from '../kit/dns-server.js';
import { kitEngineOptions } from '../kit/engine-options.js';
import type { PostfixLikeMta } from '../kit/postfix-like-mta.js';
import { startSharedHostLab } from '../kit/shared-host-lab.js';
import { waitFor } from '../kit/wait-for.js';

const HOST = '127.0.12.1';
/** Another host, for a single verification before the batch. */
const OTHER = '127.0.12.2';
const CAP = 2;
const SINGLE_TIMEOUT_MS = 3_000;

let dns: FakeDnsServer;
let mta: PostfixLikeMta;
const closing: (Verifier | BatchEngine)[] = [];

beforeAll(async () => {
  // Every transaction pays a 150 ms in_flow_delay: a batch of 100 holds the host for a second or more.
  ({ mta, dns } = await startSharedHostLab({ shared: HOST, other: OTHER, inFlowDelayMs: 150 }));
});

afterEach(async () => {
  await Promise.all(closing.splice(0).map((c) => c.close()));
});

afterAll(async () => {
  await mta.close();
  await dns.close();
});

/** A verifier and a batch engine with the kit's options and a per-host cap of 2, asking `broker` if given. */
function engines(broker: SessionBroker | null): { verifier: Verifier; batch: BatchEngine } {
  const options = kitEngineOptions(dns.address, mta.port);
  const verifier = createVerifier(
    { ...options, smtp: { ...options.smtp, perHostConcurrency: CAP, sessions: { idleMs: 5_000 } } },
    broker === null ? {} : { broker },
  );
  const batch = createBatchEngine(
    {
      ...options,
      concurrency: 10,
      perHostConcurrency: CAP,
      greylistRetries: 0,
      greylistDelayMs: 10,
      timeoutMs: 3_000,
      recipientsPerTransaction: 10,
    },
    broker === null ? {} : { broker },
  );
  closing.push(verifier, batch);
  return { verifier, batch };
}

/**
 * Runs a batch of 100 addresses and, while it runs, rounds of 3 concurrent single verifications
 * (at most 8 rounds). Returns the singles' statuses and latencies, the rounds that ended before
 * the batch did, and the most sessions the host saw at once.
 */
async function batchAndSingles(broker: SessionBroker | null) {
  const { verifier, batch } = engines(broker);
  mta.resetStats();
  let batchDone = false;
  const batchRun = batch
    .verifyMany(Array.from({ length: 100 }, (_, i) => `bulk${i}@shared.test`))
    .finally(() => (batchDone = true));
  // Let the batch take the host first.
  await new Promise((resolve) => setTimeout(resolve, 100));
  const singles: { status: string; latency: number }[] = [];
  let roundsDuringBatch = 0;
  for (let round = 0; round < 8 && !batchDone; round++) {
    const results = await Promise.all(
      [0, 1, 2].map((i) =>
        verifier.verify(`single${round}-${i}@shared.test`, { timeoutMs: SINGLE_TIMEOUT_MS }),
      ),
    );
    for (const r of results) singles.push({ status: r.status, latency: r.latency_ms });
    if (!batchDone) roundsDuringBatch += 1;
  }
  const batchResults = await batchRun;
  await verifier.close();
  await batch.close();
  return {
    singles,
    roundsDuringBatch,
    batchStatuses: new Set(batchResults.map((r) => r.status)),
    peak: mta.stats().peakConcurrentByHost[HOST] ?? 0,
  };
}

describe('one broker: one per-host cap for batches and single verifications', () => {
  it('keeps a batch and concurrent single verifications to one host within the cap together', async () => {
    const run = await batchAndSingles(new SessionBroker({ perHostConcurrency: CAP }));
    expect(run.batchStatuses).toEqual(new Set(['deliverable']));
    expect(run.peak).toBeLessThanOrEqual(CAP);
    // Both sides did reach the host at once (the batch held one slot, the singles the other).
    expect(run.peak).toBe(CAP);
  });

  it('answers single verifications within their timeout while a large batch holds the host', async () => {
    const run = await batchAndSingles(new SessionBroker({ perHostConcurrency: CAP }));
    expect(run.roundsDuringBatch).toBeGreaterThan(0);
    expect(run.singles.length).toBeGreaterThan(0);
    for (const single of run.singles) {
      expect(single.status).toBe('deliverable');
      expect(single.latency).toBeLessThan(SINGLE_TIMEOUT_MS);
    }
  });

  it('without one broker, each side takes the whole cap: twice the cap at the host', async () => {
    const run = await batchAndSingles(null);
    expect(run.peak).toBeGreaterThan(CAP);
  });
});

describe('a batch session with no work left', () => {
  it('waits idle in the broker and serves the next single verification to its host, without a new connection', async () => {
    const { verifier, batch } = engines(new SessionBroker({ perHostConcurrency: CAP }));
    // Single verifications are asked for in this process (elsewhere, a batch session is not kept).
    expect((await verifier.verify('single-first@other.test')).status).toBe('deliverable');
    mta.resetStats();
    const results = await batch.verifyMany(['bulk-a@shared.test', 'bulk-b@shared.test']);
    expect(results.map((r) => r.status)).toEqual(['deliverable', 'deliverable']);
    await waitFor(
      'the batch session kept idle',
      async () => (verifier.sessionStats!().adopted === 1 ? true : undefined),
      2_000,
      20,
    );
    const connections = mta.stats().connections;
    const single = await verifier.verify('single-after@shared.test', {
      timeoutMs: SINGLE_TIMEOUT_MS,
      transcript: true,
    });
    expect(single.status).toBe('deliverable');
    expect(mta.stats().connections).toBe(connections);
    const lines = single.transcript!.map((l) => l.text);
    expect(lines[0]).toBe(`[reuse mx.shared.test (${HOST})]`);
    // The batch's transaction is reset first, on the same session.
    expect(lines).toContain('RSET');
  });

  it("carries the host's next batch work after a single verification used it, without a new connection", async () => {
    const { verifier, batch } = engines(new SessionBroker({ perHostConcurrency: CAP }));
    expect((await verifier.verify('single-first@other.test')).status).toBe('deliverable');
    mta.resetStats();
    await batch.verifyMany(['bulk-e@shared.test']);
    await waitFor(
      'the batch session kept idle',
      async () => (verifier.sessionStats!().adopted === 1 ? true : undefined),
      2_000,
      20,
    );
    expect((await verifier.verify('single-between@shared.test')).status).toBe('deliverable');
    const results = await batch.verifyMany(['bulk-f@shared.test', 'bulk-g@shared.test']);
    expect(results.map((r) => r.status)).toEqual(['deliverable', 'deliverable']);
    // One connection for the first batch, the single verification and the second batch.
    expect(mta.stats().connections).toBe(1);
  });

  it('is closed as before where no single verification was asked', async () => {
    const { verifier, batch } = engines(new SessionBroker({ perHostConcurrency: CAP }));
    await batch.verifyMany(['bulk-d@shared.test']);
    await new Promise((resolve) => setTimeout(resolve, 200));
    expect(verifier.sessionStats!().adopted).toBe(0);
  });

  it('is closed as before without a broker shared with the single verifications', async () => {
    const { verifier, batch } = engines(null);
    mta.resetStats();
    await batch.verifyMany(['bulk-c@shared.test']);
    const single = await verifier.verify('single-apart@shared.test', {
      timeoutMs: SINGLE_TIMEOUT_MS,
      transcript: true,
    });
    expect(single.status).toBe('deliverable');
    expect(single.transcript![0]!.text).toMatch(/^\[connect /);
    expect(verifier.sessionStats!().adopted).toBe(0);
  });
});

describe("a single verification's idle session", () => {
  it("carries a batch's work at its host, and serves the next single verification, on one connection", async () => {
    const { verifier, batch } = engines(new SessionBroker({ perHostConcurrency: CAP }));
    mta.resetStats();
    expect((await verifier.verify('single-warm@shared.test')).status).toBe('deliverable');
    const results = await batch.verifyMany(['bulk-h@shared.test', 'bulk-i@shared.test']);
    expect(results.map((r) => r.status)).toEqual(['deliverable', 'deliverable']);
    expect(mta.stats().connections).toBe(1);
    const single = await verifier.verify('single-again@shared.test', {
      timeoutMs: SINGLE_TIMEOUT_MS,
      transcript: true,
    });
    expect(single.status).toBe('deliverable');
    expect(single.transcript![0]!.text).toBe(`[reuse mx.shared.test (${HOST})]`);
    expect(mta.stats().connections).toBe(1);
  });
});

describe('the service', () => {
  it('builds its verifier with the broker that its embedded batch engine takes', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'mailverdict-session-broker-'));
    const runtime = await createRuntime(loadConfig({ dataDir }, {}), { logger: pino({ level: 'silent' }) });
    try {
      expect(runtime.ctx.sessionBroker).toBeInstanceOf(SessionBroker);
    } finally {
      await runtime.close();
      rmSync(dataDir, { recursive: true, force: true });
    }
  });
});

describe('SessionBroker', () => {
  it('leaves each kind one slot of a cap of two or more', () => {
    const broker = new SessionBroker({ perHostConcurrency: 3 });
    broker.take('batch', 'h', null);
    broker.take('batch', 'h', null);
    expect(broker.canOpen('batch', 'h', null)).toBe(false);
    expect(broker.canOpen('single', 'h', null)).toBe(true);
    broker.take('single', 'h', null);
    expect(broker.canOpen('single', 'h', null)).toBe(false);
  });

  it('holds batches back from the slot a waiting single verification needs', () => {
    const broker = new SessionBroker({ perHostConcurrency: 4 });
    broker.take('batch', 'h', null);
    broker.take('batch', 'h', null);
    broker.wait('h', null);
    const done = broker.wait('h', null);
    expect(broker.canOpen('batch', 'h', null)).toBe(false);
    expect(broker.canOpen('single', 'h', null)).toBe(true);
    let woken = 0;
    broker.onFree('batch', () => (woken += 1));
    done();
    expect(woken).toBe(1);
    expect(broker.canOpen('batch', 'h', null)).toBe(true);
  });

  it('caps a provider group across both kinds', () => {
    const broker = new SessionBroker({ perHostConcurrency: 5, providerConcurrency: 2 });
    broker.take('batch', 'a', 'g');
    broker.take('single', 'b', 'g');
    expect(broker.canOpen('single', 'c', 'g')).toBe(false);
    expect(broker.canOpen('single', 'c', null)).toBe(true);
    broker.give('batch', 'a', 'g');
    expect(broker.canOpen('batch', 'c', 'g')).toBe(true);
    // The single verifications already hold their kind's share of the group.
    expect(broker.canOpen('single', 'c', 'g')).toBe(false);
  });
});
