/**
 * Single verifications count against the per-host cap that batch engines share through Redis
 * (src/engine/probe.ts, `sharedSlots`): a verifier in one "process" and a batch engine in
 * another, each with its own Redis connection and coordination, against one MX host that counts
 * its concurrent sessions. Together they never exceed the cap; without the shared slots the
 * single verifications take their whole local cap on top of the batch's. A verifier whose Redis
 * is unreachable verifies under its own caps (that part needs no Redis).
 */
import pino from 'pino';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { createBatchEngine } from '../../src/engine/batch/batch-engine.js';
import type { BatchEngine } from '../../src/engine/batch/types.js';
import type { Verifier } from '../../src/engine/index.js';
import { createVerifier } from '../../src/engine/index.js';
import { closeRedis, openRedis } from '../../src/redis/connection.js';
import { createRedisCoordination } from '../../src/redis/coordination.js';
import type { FakeDnsServer } from '../kit/dns-server.js';
import { startDnsServer } from '../kit/dns-server.js';
import { kitEngineOptions } from '../kit/engine-options.js';
import type { PostfixLikeMta } from '../kit/postfix-like-mta.js';
import { startSharedHostLab } from '../kit/shared-host-lab.js';
import { startPostfixLikeMta } from '../kit/postfix-like-mta.js';
import { createHarness } from '../kit/api-harness.js';
import { waitFor } from '../kit/wait-for.js';
import {
  skipWithoutRedis,
  TEST_REDIS_URL,
  testRedis,
  unreachableRedisUrl,
  type TestRedis,
} from './redis-kit.js';

const HOST = '127.0.13.1';
const CAP = 2;
const SINGLE_TIMEOUT_MS = 5_000;

describe.skipIf(skipWithoutRedis('Single verifications on shared slots'))(
  'single verifications and batches of other processes under one cap (Redis)',
  () => {
    let dns: FakeDnsServer;
    let mta: PostfixLikeMta;
    let redis: TestRedis;
    const closing: (Verifier | BatchEngine)[] = [];

    beforeAll(async () => {
      // Every transaction pays a 100 ms in_flow_delay: the batch holds the host for a while.
      ({ mta, dns } = await startSharedHostLab({ shared: HOST, inFlowDelayMs: 100 }));
    });

    afterEach(async () => {
      await Promise.all(closing.splice(0).map((c) => c.close()));
      await redis?.close();
    });

    afterAll(async () => {
      await mta.close();
      await dns.close();
    });

    /** A batch of 100 in one process while another answers single verifications, 3 at a time. */
    async function run(shareSingles: boolean): Promise<{ peak: number; statuses: Set<string> }> {
      redis = testRedis();
      const options = kitEngineOptions(dns.address, mta.port);
      const verifier = createVerifier(
        {
          ...options,
          smtp: { ...options.smtp, perHostConcurrency: CAP, sessions: { idleMs: 300 } },
        },
        shareSingles
          ? {
              sharedSlots: {
                coordination: createRedisCoordination(await redis.connect(), { keyPrefix: redis.prefix }),
                perHostConcurrency: CAP,
              },
            }
          : {},
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
        { coordination: createRedisCoordination(await redis.connect(), { keyPrefix: redis.prefix }) },
      );
      closing.push(verifier, batch);
      mta.resetStats();
      let batchDone = false;
      const batchRun = batch
        .verifyMany(Array.from({ length: 100 }, (_, i) => `bulk${i}@shared.test`))
        .finally(() => (batchDone = true));
      const statuses = new Set<string>();
      for (let round = 0; round < 10 && !batchDone; round++) {
        const results = await Promise.all(
          [0, 1, 2].map((i) =>
            verifier.verify(`single${round}-${i}@shared.test`, { timeoutMs: SINGLE_TIMEOUT_MS }),
          ),
        );
        for (const r of results) statuses.add(r.status);
      }
      for (const r of await batchRun) statuses.add(r.status);
      return { peak: mta.stats().peakConcurrentByHost[HOST] ?? 0, statuses };
    }

    it('never has more than the cap at the host, singles and the other process batch together', async () => {
      const { peak, statuses } = await run(true);
      expect(statuses).toEqual(new Set(['deliverable']));
      expect(peak).toBeLessThanOrEqual(CAP);
      expect(peak).toBeGreaterThan(0);
    });

    it('without the shared slots, the single verifications come on top of the batch: over the cap', async () => {
      const { peak } = await run(false);
      expect(peak).toBeGreaterThan(CAP);
    });

    it('is how the service (--redis-url) verifies: a warm session holds its slot in Redis until it ends', async () => {
      redis = testRedis();
      const client = await redis.connect();
      const h = await createHarness({
        flags: {
          redisUrl: TEST_REDIS_URL,
          redisKeyPrefix: redis.prefix,
          smtpPort: String(mta.port),
          smtpSessionIdle: '1s',
        },
      });
      try {
        h.dns.setDomain('shared.test', { mx: [{ exchange: 'mx.shared.test', priority: 10 }] });
        h.dns.setDomain('mx.shared.test', { a: [HOST] });
        const res = await h.verify(h.liveKey, { email: 'single-svc@shared.test' });
        expect(res.json()).toMatchObject({ status: 'deliverable' });
        // The session stays warm, and so does its slot; it goes back once the session is retired.
        expect(await client.zcard(`${redis.prefix}slots:${HOST}`)).toBe(1);
        await waitFor(
          'the slot given back',
          async () => ((await client.zcard(`${redis.prefix}slots:${HOST}`)) === 0 ? true : undefined),
          5_000,
          50,
        );
      } finally {
        await h.close();
      }
    });
  },
);

describe('a verifier whose Redis is unreachable', () => {
  it('verifies under its own caps rather than fail (a person is waiting), and says so', async () => {
    const client = await openRedis(await unreachableRedisUrl(), { logger: pino({ level: 'silent' }) });
    const mta = await startPostfixLikeMta({
      hosts: [HOST],
      inFlowDelayMs: 0,
      rcpt: (address) => (address.startsWith('single') ? '250 2.1.5 Ok' : '550 5.1.1 User unknown'),
    });
    const dns = await startDnsServer({
      'shared.test': { mx: [{ exchange: 'mx.shared.test', priority: 10 }] },
      'mx.shared.test': { a: [HOST] },
    });
    const failures: string[] = [];
    const verifier = createVerifier(kitEngineOptions(dns.address, mta.port), {
      sharedSlots: {
        coordination: createRedisCoordination(client, { keyPrefix: 'mvtest:unreachable:' }),
        perHostConcurrency: CAP,
        failed: (_error, operation) => failures.push(operation),
      },
    });
    try {
      const result = await verifier.verify('single@shared.test', { timeoutMs: SINGLE_TIMEOUT_MS });
      expect(result.status).toBe('deliverable');
      expect(failures.length).toBeGreaterThan(0);
    } finally {
      await verifier.close();
      await closeRedis(client);
      await mta.close();
      await dns.close();
    }
  });
});
