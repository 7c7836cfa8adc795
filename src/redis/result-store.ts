/**
 * The result cache's store in Redis (services/verify/result-cache.ts), shared by every API and worker
 * process on it: one string per entry, `<prefix>result:<hashed key>`, holding the entry as JSON
 * with a PX equal to its remaining lifetime, so that Redis reclaims it when it expires. A read is
 * one MGET and a batch of writes one pipeline, whatever the number of addresses.
 *
 * The client belongs to the caller (src/redis/connection.ts). While Redis is unreachable every
 * call rejects at once (no offline queue); the cache takes that as a miss.
 */
import type { Redis } from 'ioredis';
import type { ResultStore, StoredResult } from '../services/verify/result-cache.js';

export interface RedisResultStoreOptions {
  /** Prepended to every key, so that deployments and test runs sharing a Redis never meet. */
  keyPrefix: string;
  /** Epoch ms on the caller's clock, against which the entries' expiries were computed. */
  now: () => number;
}

export function createRedisResultStore(client: Redis, options: RedisResultStoreOptions): ResultStore {
  const prefix = `${options.keyPrefix}result:`;
  return {
    async getMany(keys) {
      if (keys.length === 0) return [];
      const values = await client.mget(keys.map((key) => prefix + key));
      return values.map((raw) => (raw === null ? undefined : parse(raw)));
    },
    async setMany(writes) {
      if (writes.length === 0) return;
      const now = options.now();
      const pipeline = client.pipeline();
      for (const { key, entry } of writes) {
        const ttl = entry === null ? 0 : Math.ceil(entry.expiresAt - now);
        if (entry === null || ttl <= 0) pipeline.del(prefix + key);
        else pipeline.set(prefix + key, JSON.stringify(entry), 'PX', ttl);
      }
      const replies = (await pipeline.exec()) ?? [];
      const failed = replies.find(([err]) => err !== null)?.[0];
      if (failed) throw failed;
    },
  };
}

/** An entry written by another version, or damaged, is a miss rather than an error. */
function parse(raw: string): StoredResult | undefined {
  try {
    const value = JSON.parse(raw) as Partial<StoredResult>;
    if (typeof value.expiresAt !== 'number' || typeof value.checkedAt !== 'number' || !value.result)
      return undefined;
    return value as StoredResult;
  } catch {
    return undefined;
  }
}
