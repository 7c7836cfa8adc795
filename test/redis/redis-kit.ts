/**
 * Real Redis for the tests that need one: MAILVERDICT_TEST_REDIS_URL names it (.ci/run sets it).
 * Without it those suites are skipped, each saying so in one printed line. Every test gets its
 * own key prefix, and its keys are deleted when it closes, so runs never see each other.
 */
import { randomUUID } from 'node:crypto';
import { createServer } from 'node:net';
import type { Redis } from 'ioredis';
import pino, { type Logger } from 'pino';
import { closeRedis, openRedis } from '../../src/redis/connection.js';

export const TEST_REDIS_URL = process.env.MAILVERDICT_TEST_REDIS_URL ?? '';

/** True when `suite` must be skipped (no Redis named), after printing why. */
export function skipWithoutRedis(suite: string): boolean {
  if (TEST_REDIS_URL !== '') return false;
  console.log(`${suite}: skipped, MAILVERDICT_TEST_REDIS_URL is not set (e.g. redis://127.0.0.1:6379)`);
  return true;
}

export interface TestRedis {
  /** A fresh prefix ending in ':' for this test's keys. */
  prefix: string;
  /** Opens one more connection, as another process would have (closed by close()). */
  connect(logger?: Logger): Promise<Redis>;
  /** Deletes every key under the prefix and closes the connections. */
  close(): Promise<void>;
}

export function testRedis(url = TEST_REDIS_URL): TestRedis {
  const prefix = `mvtest:${randomUUID()}:`;
  const clients: Redis[] = [];
  return {
    prefix,
    async connect(logger = pino({ level: 'silent' })) {
      const client = await openRedis(url, { logger });
      clients.push(client);
      return client;
    },
    async close() {
      const first = clients.find((c) => c.status === 'ready');
      if (first) {
        let cursor = '0';
        do {
          const [next, keys] = await first.scan(cursor, 'MATCH', `${prefix}*`, 'COUNT', 1000);
          if (keys.length > 0) await first.del(...keys);
          cursor = next;
        } while (cursor !== '0');
      }
      await Promise.all(clients.map((c) => closeRedis(c)));
    },
  };
}

/** redis:// on a loopback port that nothing listens on (bound, then closed again). */
export async function unreachableRedisUrl(): Promise<string> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  await new Promise<void>((resolve) => server.close(() => resolve()));
  if (address === null || typeof address === 'string') throw new Error('no port');
  return `redis://127.0.0.1:${address.port}`;
}

export const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));
