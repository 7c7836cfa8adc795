/**
 * "An address repeated across chunks of one job is probed once, not once per worker" (issue 8):
 * two workers, each with its own chunk verifier, batch engine and coordination instance (as two
 * worker processes), verify one live job whose repeated address sits in chunks claimed by
 * different workers. The MTA sees one RCPT for it, and both rows carry the same result. Run on
 * the in-process coordination (one instance shared by both, as in one process) and on Redis
 * (a connection each, one key prefix; skipped without MAILVERDICT_TEST_REDIS_URL).
 */
import pino from 'pino';
import { afterEach, describe, expect, it } from 'vitest';
import { batchEngineOptions } from '../../src/config.js';
import { createBatchEngine } from '../../src/engine/batch/batch-engine.js';
import type { BatchEngine } from '../../src/engine/batch/types.js';
import { createLocalCoordination } from '../../src/engine/coordination-local.js';
import type { EngineCoordination } from '../../src/engine/coordination.js';
import { createChunkVerifier, type ChunkVerifier } from '../../src/services/batches/chunk-verifier.js';
import { createWorker, type Worker } from '../../src/jobs/worker.js';
import { createRedisCoordination } from '../../src/redis/coordination.js';
import { startSmtpServers, type SmtpKit } from '../kit/smtp-servers.js';
import { skipWithoutRedis, testRedis } from '../redis/redis-kit.js';
import { createJobsHarness, type JobsHarness, type ResultsJson } from '../kit/jobs-kit.js';

interface Coordinations {
  /** The coordination of one more worker process. */
  next(): Promise<EngineCoordination>;
  close(): Promise<void>;
}

interface TwoWorkers {
  h: JobsHarness;
  kit: SmtpKit;
  a: Worker;
  b: Worker;
  close(): Promise<void>;
}

const REPEATED = 'user1@acme.test';

/** Chunks of ten; `REPEATED` opens chunks 0 and 1 (spelt with another domain case in chunk 1). */
const emails = [
  REPEATED,
  ...Array.from({ length: 9 }, (_, i) => `first${i}@acme.test`),
  'user1@ACME.test',
  ...Array.from({ length: 9 }, (_, i) => `second${i}@acme.test`),
];

async function twoWorkers(coordinations: Coordinations, mtaDelayMs: number): Promise<TwoWorkers> {
  const kit = await startSmtpServers({ acme: { kind: 'mta', mailboxes: ['user1'], delayMs: mtaDelayMs } });
  const bound: { verify?: ChunkVerifier } = {};
  const h = await createJobsHarness({
    flags: { chunkSize: '10', smtpPort: String(kit.port) },
    account: { plan: 'starter' },
    verifyChunk: (...args) => bound.verify!(...args),
  });
  h.dns.setDomain('acme.test', { mx: [{ exchange: 'mx1.acme.test', priority: 10 }] });
  h.dns.setDomain('mx1.acme.test', { a: [kit.hosts.acme!.ip] });
  const { ctx } = h.runtime;
  const engines: BatchEngine[] = [];
  const verifierOf = async (): Promise<ChunkVerifier> => {
    const coordination = await coordinations.next();
    const engine = createBatchEngine(batchEngineOptions(ctx.config), { coordination });
    engines.push(engine);
    return createChunkVerifier({
      verifier: ctx.verifier,
      dnsTrust: ctx.dnsTrust,
      batchEngine: engine,
      testDomain: ctx.config.testDomain,
      testModeChunkDelayMs: 0,
      coordination,
      sharedPollMs: 20,
    });
  };
  bound.verify = await verifierOf();
  const b = createWorker({
    db: ctx.db,
    clock: ctx.clock,
    config: ctx.config,
    logger: pino({ level: 'silent' }),
    verifyChunk: await verifierOf(),
  });
  return {
    h,
    kit,
    a: h.worker,
    b,
    async close() {
      await h.close();
      await Promise.all(engines.map((e) => e.close()));
      await coordinations.close();
      await kit.close();
    },
  };
}

function describeSharedRepeats(name: string, make: () => Coordinations): void {
  describe(`repeated addresses of a job shared between workers (${name})`, () => {
    let world: TwoWorkers | undefined;
    afterEach(async () => {
      await world?.close();
      world = undefined;
    });

    async function submit(w: TwoWorkers): Promise<string> {
      const res = await w.h.submit(w.h.liveKey, { emails, notify_email: false });
      expect(res.statusCode).toBe(202);
      return res.json<{ job_id: string }>().job_id;
    }

    async function expectProbedOnce(w: TwoWorkers, jobId: string): Promise<void> {
      expect((await w.h.job(w.h.liveKey, jobId)).json()).toMatchObject({
        status: 'completed',
        processed: 20,
      });
      const rows = (await w.h.results(w.h.liveKey, jobId, 'json')).json<ResultsJson>().results;
      const [first, second] = [rows[0]!, rows[10]!];
      expect(first).toMatchObject({ email: REPEATED, status: 'deliverable' });
      expect({ ...second, index: 0, email: REPEATED }).toEqual(first);
      expect(w.kit.hosts.acme!.commands.filter((c) => /^RCPT TO:<user1@acme\.test>/i.test(c))).toHaveLength(
        1,
      );
    }

    it('a worker reuses the result another worker probed earlier in the job', async () => {
      const w = (world = await twoWorkers(make(), 0));
      const jobId = await submit(w);
      expect(await w.a.runOnce()).toBe(true);
      expect(await w.b.runOnce()).toBe(true);
      await expectProbedOnce(w, jobId);
    });

    it('a worker waits for the result of an address another worker is probing at the same time', async () => {
      // 100 ms per reply: each chunk's probes overlap the other's.
      const w = (world = await twoWorkers(make(), 100));
      const jobId = await submit(w);
      expect(await Promise.all([w.a.runOnce(), w.b.runOnce()])).toEqual([true, true]);
      await expectProbedOnce(w, jobId);
    });
  });
}

describeSharedRepeats('in-process coordination', () => {
  const coordination = createLocalCoordination();
  return { next: async () => coordination, close: () => coordination.close() };
});

describe.skipIf(skipWithoutRedis('Repeated addresses shared through Redis'))('on Redis', () => {
  describeSharedRepeats('Redis, a connection per worker', () => {
    const redis = testRedis();
    return {
      next: async () => createRedisCoordination(await redis.connect(), { keyPrefix: redis.prefix }),
      close: () => redis.close(),
    };
  });
});
