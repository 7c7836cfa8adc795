/**
 * Provider-wide politeness shared through Redis: three batch engines, each with its own Redis
 * connection and coordination (as three worker processes), keep to one provider cap over all of
 * its MX hosts together. The specification is test/engine/provider-politeness-kit.ts's, which
 * test/engine also runs on the in-process coordination.
 */
import { describe } from 'vitest';
import { createRedisCoordination } from '../../src/redis/coordination.js';
import { describeProviderPoliteness } from '../engine/provider-politeness-kit.js';
import { skipWithoutRedis, testRedis } from './redis-kit.js';

describe.skipIf(skipWithoutRedis('Provider-wide politeness on Redis'))('provider politeness on Redis', () => {
  describeProviderPoliteness('Redis, a connection per engine', () => {
    const redis = testRedis();
    return {
      next: async () => createRedisCoordination(await redis.connect(), { keyPrefix: redis.prefix }),
      close: () => redis.close(),
    };
  });
});
