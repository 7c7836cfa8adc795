/**
 * One per-host cap for a process's batches and single verifications (src/engine/sessions/session-share.ts),
 * counted where it matters, at a Postfix-like mail host of the kit: a large batch and concurrent
 * single verifications to the same host together stay within `--per-host-concurrency`, and the
 * single verifications are answered within their timeout while the batch holds the host.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pino from 'pino';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config.js';
import { createRuntime } from '../../src/runtime.js';
import { createBatchEngine } from '../../src/engine/batch/batch-engine.js';
import { SessionShare } from '../../src/engine/sessions/session-share.js';
import type { BatchEngine } from '../../src/engine/batch/types.js';
import type { Verifier } from '../../src/engine/index.js';
import { createVerifier } from '../../src/engine/index.js';
import type { FakeDnsServer } from '../kit/dns-server.js';
import { startDnsServer } from '../kit/dns-server.js';
import { kitEngineOptions } from '../kit/engine-options.js';
import type { PostfixLikeMta } from '../kit/postfix-like-mta.js';
import { startPostfixLikeMta } from '../kit/postfix-like-mta.js';
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
  mta = await startPostfixLikeMta({
    hosts: [HOST, OTHER],
    inFlowDelayMs: 150,
    rcpt: (address) =>
      /^(bulk|single)/.test(address)
        ? '250 2.1.5 Ok'
        : `550 5.1.1 <${address}>: Recipient address rejected: User unknown`,
  });
  dns = await startDnsServer({
    'shared.test': { mx: [{ exchange: 'mx.shared.test', priority: 10 }] },
    'mx.shared.test': { a: [HOST] },
    'other.test': { mx: [{ exchange: 'mx.other.test', priority: 10 }] },
    'mx.other.test': { a: [OTHER] },
  });
});

afterEach(async () => {
  await Promise.all(closing.splice(0).map((c) => c.close()));
});

afterAll(async () => {
  await mta.close();
  await dns.close();
});

/** A verifier and a batch engine with the kit's options and a per-host cap of 2, sharing `share` if given. */
function engines(share: SessionShare | null): { verifier: Verifier; batch: BatchEngine } {
  const options = kitEngineOptions(dns.address, mta.port);
  const verifier = createVerifier(
    { ...options, smtp: { ...options.smtp, perHostConcurrency: CAP, sessions: { idleMs: 5_000 } } },
    share === null ? {} : { sessionShare: share },
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
    share === null ? {} : { sessionShare: share },
  );
  closing.push(verifier, batch);
  return { verifier, batch };
}

/**
 * Runs a batch of 100 addresses and, while it runs, rounds of 3 concurrent single verifications
 * (at most 8 rounds). Returns the singles' statuses and latencies, the rounds that ended before
 * the batch did, and the most sessions the host saw at once.
 */
async function batchAndSingles(share: SessionShare | null) {
  const { verifier, batch } = engines(share);
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

describe('one per-host cap for batches and single verifications', () => {
  it('keeps a batch and concurrent single verifications to one host within the cap together', async () => {
    const run = await batchAndSingles(new SessionShare({ perHostConcurrency: CAP }));
    expect(run.batchStatuses).toEqual(new Set(['deliverable']));
    expect(run.peak).toBeLessThanOrEqual(CAP);
    // Both sides did reach the host at once (the batch held one slot, the singles the other).
    expect(run.peak).toBe(CAP);
  });

  it('answers single verifications within their timeout while a large batch holds the host', async () => {
    const run = await batchAndSingles(new SessionShare({ perHostConcurrency: CAP }));
    expect(run.roundsDuringBatch).toBeGreaterThan(0);
    expect(run.singles.length).toBeGreaterThan(0);
    for (const single of run.singles) {
      expect(single.status).toBe('deliverable');
      expect(single.latency).toBeLessThan(SINGLE_TIMEOUT_MS);
    }
  });

  it('without the share, each side takes the whole cap: twice the cap at the host', async () => {
    const run = await batchAndSingles(null);
    expect(run.peak).toBeGreaterThan(CAP);
  });
});

describe('a batch session with no work left', () => {
  it('serves the next single verification to its host, without a new connection', async () => {
    const { verifier, batch } = engines(new SessionShare({ perHostConcurrency: CAP }));
    // Single verifications are asked for in this process (elsewhere, a batch session is not kept).
    expect((await verifier.verify('single-first@other.test')).status).toBe('deliverable');
    mta.resetStats();
    const results = await batch.verifyMany(['bulk-a@shared.test', 'bulk-b@shared.test']);
    expect(results.map((r) => r.status)).toEqual(['deliverable', 'deliverable']);
    await waitFor(
      'the batch session taken over',
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

  it('is closed as before where no single verification was asked', async () => {
    const { verifier, batch } = engines(new SessionShare({ perHostConcurrency: CAP }));
    await batch.verifyMany(['bulk-d@shared.test']);
    await new Promise((resolve) => setTimeout(resolve, 200));
    expect(verifier.sessionStats!().adopted).toBe(0);
  });

  it('is closed as before when the caps are not shared', async () => {
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

describe('the service', () => {
  it('builds its verifier with the share that its embedded batch engine takes', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'mailverdict-session-share-'));
    const runtime = await createRuntime(loadConfig({ dataDir }, {}), { logger: pino({ level: 'silent' }) });
    try {
      expect(runtime.ctx.sessionShare).toBeInstanceOf(SessionShare);
    } finally {
      await runtime.close();
      rmSync(dataDir, { recursive: true, force: true });
    }
  });
});

describe('SessionShare', () => {
  it('leaves each class one slot of a cap of two or more', () => {
    const share = new SessionShare({ perHostConcurrency: 3 });
    share.take('batch', 'h', null);
    share.take('batch', 'h', null);
    expect(share.canOpen('batch', 'h', null)).toBe(false);
    expect(share.canOpen('single', 'h', null)).toBe(true);
    share.take('single', 'h', null);
    expect(share.canOpen('single', 'h', null)).toBe(false);
  });

  it('holds batches back from the slot a waiting single verification needs', () => {
    const share = new SessionShare({ perHostConcurrency: 4 });
    share.take('batch', 'h', null);
    share.take('batch', 'h', null);
    share.wait('h', null);
    const done = share.wait('h', null);
    expect(share.canOpen('batch', 'h', null)).toBe(false);
    expect(share.canOpen('single', 'h', null)).toBe(true);
    let woken = 0;
    share.onFree('batch', () => (woken += 1));
    done();
    expect(woken).toBe(1);
    expect(share.canOpen('batch', 'h', null)).toBe(true);
  });

  it('caps a provider group across both classes', () => {
    const share = new SessionShare({ perHostConcurrency: 5, groupConcurrency: 2 });
    share.take('batch', 'a', 'g');
    share.take('single', 'b', 'g');
    expect(share.canOpen('single', 'c', 'g')).toBe(false);
    expect(share.canOpen('single', 'c', null)).toBe(true);
    share.give('batch', 'a', 'g');
    expect(share.canOpen('batch', 'c', 'g')).toBe(true);
    // The single verifications already hold their class's share of the group.
    expect(share.canOpen('single', 'c', 'g')).toBe(false);
  });
});
