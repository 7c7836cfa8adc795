/**
 * The reputation guard's store (src/engine/egress/egress-health.ts) in Redis: every API and worker
 * process on it sees one health per egress, and one of them per interval queries the blocklists.
 *
 * - `<prefix>egress:<id>`: a hash with the last blocklist check (`check`) and the run-time rest
 *   (`degraded`), each as JSON;
 * - `<prefix>egress-lease:<name>`: `SET NX PX`, the right to run one check for an interval;
 * - `<prefix>egress-refusals:<id>`: a sorted set of mail hosts scored by when they last refused
 *   the egress, trimmed to the window on every write (so it holds at most the hosts of one window).
 *
 * Times are the callers' epoch ms (the guard's clock), as the engine's rests are.
 */
import type { Redis } from 'ioredis';
import type {
  EgressCheck,
  EgressDegradation,
  EgressHealthStore,
  EgressRecord,
} from '../engine/egress/egress-health.js';

/** A health record outlives its last write by this long (a stopped fleet leaves no keys for ever). */
const RECORD_TTL_MS = 7 * 24 * 3600_000;

export function createRedisEgressHealth(client: Redis, options: { keyPrefix: string }): EgressHealthStore {
  const record = (id: string): string => `${options.keyPrefix}egress:${id}`;
  const write = async (id: string, field: 'check' | 'degraded', value: unknown): Promise<void> => {
    await client
      .multi()
      .hset(record(id), field, JSON.stringify(value))
      .pexpire(record(id), RECORD_TTL_MS)
      .exec();
  };
  return {
    tryLease: async (name, ttlMs) =>
      (await client.set(
        `${options.keyPrefix}egress-lease:${name}`,
        '1',
        'PX',
        Math.max(1, Math.ceil(ttlMs)),
        'NX',
      )) === 'OK',
    read: async (ids) => {
      const out = new Map<string, EgressRecord>();
      if (ids.length === 0) return out;
      const pipeline = client.pipeline();
      for (const id of ids) pipeline.hmget(record(id), 'check', 'degraded');
      const replies = (await pipeline.exec()) ?? [];
      replies.forEach(([err, value], i) => {
        if (err) throw err;
        const [check, degraded] = value as [string | null, string | null];
        if (check === null && degraded === null) return;
        out.set(ids[i]!, {
          check: check === null ? null : (JSON.parse(check) as EgressCheck),
          degraded: degraded === null ? null : (JSON.parse(degraded) as EgressDegradation),
        });
      });
      return out;
    },
    writeCheck: (id, check) => write(id, 'check', check),
    writeDegraded: async (id, degraded) => {
      await write(id, 'degraded', degraded);
      await client.del(`${options.keyPrefix}egress-refusals:${id}`);
    },
    addRefusal: async (id, host, at, windowMs) => {
      const key = `${options.keyPrefix}egress-refusals:${id}`;
      const replies = await client
        .multi()
        .zadd(key, at, host)
        .zremrangebyscore(key, '-inf', at - windowMs)
        .zcard(key)
        .pexpire(key, Math.max(1, Math.ceil(windowMs)))
        .exec();
      const count = replies?.[2];
      if (count === undefined || count[0] !== null) throw count?.[0] ?? new Error('EXEC aborted');
      return Number(count[1]);
    },
  };
}
