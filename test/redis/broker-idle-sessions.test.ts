/**
 * A batch session with no work left kept idle in the process's session broker when slots are
 * shared through Redis (src/engine/sessions/broker.ts): the session's slot in Redis stays held by
 * the batch that opened it, so that the single verification after the batch reuses the
 * connection and another process (a batch engine on its own Redis connection) cannot open a
 * session beyond the cap while it lives; the slot goes back once the idle session ends.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { createBatchEngine } from '../../src/engine/batch/batch-engine.js';
import { SessionBroker } from '../../src/engine/sessions/broker.js';
import type { BatchEngine } from '../../src/engine/batch/types.js';
import type { EngineCoordination } from '../../src/engine/coordination.js';
import type { Verifier } from '../../src/engine/index.js';
import { createVerifier } from '../../src/engine/index.js';
import { createRedisCoordination } from '../../src/redis/coordination.js';
import type { FakeDnsServer } from '../kit/dns-server.js';
import { kitEngineOptions } from '../kit/engine-options.js';
import type { PostfixLikeMta } from '../kit/postfix-like-mta.js';
import { startSharedHostLab } from '../kit/shared-host-lab.js';
import { waitFor } from '../kit/wait-for.js';
import { skipWithoutRedis, testRedis, type TestRedis } from './redis-kit.js';

const HOST = '127.0.13.2';
/** Another host, for a single verification before the batch. */
const OTHER = '127.0.13.3';
const CAP = 1;
const IDLE_MS = 1_000;

describe.skipIf(skipWithoutRedis('Idle batch sessions in the broker with Redis'))(
  'a batch session kept idle for the single verifications with slots shared through Redis',
  () => {
    let dns: FakeDnsServer;
    let mta: PostfixLikeMta;
    let redis: TestRedis;
    const closing: (Verifier | BatchEngine)[] = [];

    beforeAll(async () => {
      ({ mta, dns } = await startSharedHostLab({ shared: HOST, other: OTHER, inFlowDelayMs: 0 }));
    });

    afterEach(async () => {
      await Promise.all(closing.splice(0).map((c) => c.close()));
      await redis?.close();
    });

    afterAll(async () => {
      await mta.close();
      await dns.close();
    });

    function batchEngine(coordination: EngineCoordination, broker: SessionBroker | null): BatchEngine {
      const options = kitEngineOptions(dns.address, mta.port);
      const batch = createBatchEngine(
        {
          ...options,
          concurrency: 10,
          perHostConcurrency: CAP,
          greylistRetries: 0,
          greylistDelayMs: 10,
          timeoutMs: 5_000,
        },
        { coordination, ...(broker === null ? {} : { broker }) },
      );
      closing.push(batch);
      return batch;
    }

    it('reuses the batch session for the next single verification, its Redis slot held until it ends', async () => {
      redis = testRedis();
      const client = await redis.connect();
      const slots = async (): Promise<number> => client.zcard(`${redis.prefix}slots:${HOST}`);
      // This process: single verifications and a batch engine asking one broker, as `serve` builds them.
      const coordination = createRedisCoordination(await redis.connect(), { keyPrefix: redis.prefix });
      const broker = new SessionBroker({ perHostConcurrency: CAP });
      const options = kitEngineOptions(dns.address, mta.port);
      const verifier = createVerifier(
        { ...options, smtp: { ...options.smtp, perHostConcurrency: CAP, sessions: { idleMs: IDLE_MS } } },
        { broker, sharedSlots: { coordination, perHostConcurrency: CAP } },
      );
      closing.push(verifier);
      const batch = batchEngine(coordination, broker);
      // Another process: a batch engine on its own Redis connection, sharing only the Redis slots.
      const other = batchEngine(
        createRedisCoordination(await redis.connect(), { keyPrefix: redis.prefix }),
        null,
      );

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
      // The connection lives on idle in the broker, and so does its slot.
      expect(await slots()).toBe(1);

      // The other process asks for the host while the idle session lives: it waits for the slot.
      const otherRun = other.verifyMany(['bulk-other@shared.test']);
      const connections = mta.stats().connections;
      const single = await verifier.verify('single-after@shared.test', { transcript: true });
      expect(single.status).toBe('deliverable');
      expect(single.transcript![0]!.text).toBe(`[reuse mx.shared.test (${HOST})]`);
      expect(mta.stats().connections).toBe(connections);

      // The idle session ends on its idle time; its slot goes back, and the other process gets it.
      expect((await otherRun).map((r) => r.status)).toEqual(['deliverable']);
      expect(mta.stats().peakConcurrentByHost[HOST]).toBe(CAP);
      await waitFor(
        'every slot given back',
        async () => ((await slots()) === 0 ? true : undefined),
        5_000,
        50,
      );
    });
  },
);
