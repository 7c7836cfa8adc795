/**
 * The engine's coordination (src/engine/coordination.ts) in Redis, shared by every worker process
 * on every machine: session slots and health per (egress, MX host) pair, and caches of answers.
 * The engine chooses the keys (src/engine/egress/egress.ts `pairKey`: the host's IP address alone
 * for the single default egress, `<egress>|<host IP>` in an egress pool), so the per-egress caps
 * and rests are the shared ones.
 *
 * Session slots are a counting semaphore per key: a sorted set of lease tokens scored by their
 * expiry on the Redis server's clock. Acquire and renew are Lua scripts (expired leases are
 * dropped and the count checked in the same atomic step); release is one ZREM of the token, so a
 * release or renewal with a lost lease finds nothing and does nothing. A worker that dies stops
 * renewing and its slots free themselves when their leases run out.
 *
 * Not redis-semaphore: it scores a lease by the time it was taken and judges expiry with the
 * caller's own lock timeout, so leases of different lengths on one key (this interface takes
 * `leaseMs` per call) would expire each other; it stamps leases with each process's own clock; and
 * it is one object per lock with its own refresh timer, where the engine renews explicitly.
 *
 * Times are the Redis server's (TIME), so worker clocks do not bend leases or back-offs. Health is
 * a hash per key whose `notBefore` is epoch ms on that clock (restUntil takes the caller's
 * epoch ms as given); it is forgotten `healthRetentionMs` after its back-off ends. Caches are JSON
 * strings with a TTL (PX).
 *
 * The client belongs to the caller (one per process, src/redis/connection.ts): close() leaves it
 * open. While Redis is unreachable every operation rejects; politeness never fails open.
 */
import { randomUUID } from 'node:crypto';
import type { Redis } from 'ioredis';
import { HOUR } from '../clock.js';
import type {
  EngineCoordination,
  HealthState,
  HostHealth,
  SessionSlots,
  SharedCache,
  SlotLease,
} from '../engine/coordination.js';
import { LUA_NOW_MS, luaCommand } from './connection.js';

// KEYS[1] of the slot scripts: the key's leases, token -> expiry (epoch ms, server clock).
const LUA_SLOTS_PRELUDE = `${LUA_NOW_MS}
local function live_leases(key, now)
  redis.call('ZREMRANGEBYSCORE', key, '-inf', now)
end
-- The set lives as long as its last lease.
local function expire_with_last_lease(key)
  local last = redis.call('ZRANGE', key, -1, -1, 'WITHSCORES')
  redis.call('PEXPIREAT', key, last[2])
end
`;

// ARGV: cap, leaseMs, token. Returns 1 when the slot was taken.
const SLOT_ACQUIRE_LUA = `${LUA_SLOTS_PRELUDE}
local now = now_ms()
live_leases(KEYS[1], now)
if redis.call('ZCARD', KEYS[1]) >= tonumber(ARGV[1]) then return 0 end
redis.call('ZADD', KEYS[1], now + tonumber(ARGV[2]), ARGV[3])
expire_with_last_lease(KEYS[1])
return 1
`;

// ARGV: leaseMs, token. Returns 1 when the lease was still held (and now runs leaseMs from now).
const SLOT_RENEW_LUA = `${LUA_SLOTS_PRELUDE}
local now = now_ms()
live_leases(KEYS[1], now)
if not redis.call('ZSCORE', KEYS[1], ARGV[2]) then return 0 end
redis.call('ZADD', KEYS[1], 'XX', now + tonumber(ARGV[1]), ARGV[2])
expire_with_last_lease(KEYS[1])
return 1
`;

// KEYS[1] of the health scripts: a hash {f: failures in a row, nb: not before (epoch ms)}.
const LUA_HEALTH_PRELUDE = `${LUA_NOW_MS}
local function not_before(key)
  return tonumber(redis.call('HGET', key, 'nb') or 0)
end
`;

// ARGV: baseMs, maxMs, retentionMs. Returns {failures in a row, not before}.
const HEALTH_FAILURE_LUA = `${LUA_HEALTH_PRELUDE}
local f = redis.call('HINCRBY', KEYS[1], 'f', 1)
local delay = math.min(tonumber(ARGV[2]), tonumber(ARGV[1]) * 2 ^ math.min(30, f - 1))
local nb = math.max(not_before(KEYS[1]), math.ceil(now_ms() + delay))
redis.call('HSET', KEYS[1], 'nb', nb)
redis.call('PEXPIREAT', KEYS[1], nb + tonumber(ARGV[3]))
return {f, nb}
`;

// The streak ends; a back-off in force stays, a spent one is forgotten with the key.
const HEALTH_SUCCESS_LUA = `${LUA_HEALTH_PRELUDE}
if redis.call('EXISTS', KEYS[1]) == 0 then return 0 end
if not_before(KEYS[1]) <= now_ms() then
  redis.call('DEL', KEYS[1])
else
  redis.call('HSET', KEYS[1], 'f', 0)
end
return 1
`;

// ARGV: until (epoch ms), retentionMs.
const HEALTH_REST_LUA = `${LUA_HEALTH_PRELUDE}
local nb = math.max(not_before(KEYS[1]), tonumber(ARGV[1]))
redis.call('HSET', KEYS[1], 'nb', nb)
redis.call('HSETNX', KEYS[1], 'f', 0)
redis.call('PEXPIREAT', KEYS[1], nb + tonumber(ARGV[2]))
return 1
`;

export interface RedisCoordinationOptions {
  /** Prepended to every key, so that deployments and test runs sharing a Redis never meet. */
  keyPrefix: string;
  /** How long a key's health is kept once its back-off has ended (its streak then starts over). Default 1 h. */
  healthRetentionMs?: number;
}

/** An EngineCoordination whose state every process with the same Redis and prefix shares. */
export function createRedisCoordination(
  client: Redis,
  options: RedisCoordinationOptions,
): EngineCoordination {
  const prefix = options.keyPrefix;
  return {
    slots: createRedisSlots(client, `${prefix}slots:`),
    health: createRedisHealth(client, `${prefix}health:`, options.healthRetentionMs ?? HOUR),
    cache<V>(namespace: string): SharedCache<V> {
      if (namespace.includes(':')) throw new Error(`cache namespace "${namespace}" must not contain ":"`);
      return createRedisCache<V>(client, `${prefix}cache:${namespace}:`);
    },
    close: async () => {},
  };
}

/** Redis wants whole milliseconds. */
const ms = (value: number): number => Math.max(1, Math.ceil(value));

function createRedisSlots(client: Redis, prefix: string): SessionSlots {
  const acquire = luaCommand(client, 'mailverdictSlotAcquire', SLOT_ACQUIRE_LUA);
  const renew = luaCommand(client, 'mailverdictSlotRenew', SLOT_RENEW_LUA);
  return {
    tryAcquire: async (key, cap, leaseMs) => {
      const lease: SlotLease = { key, token: randomUUID() };
      return (await acquire(prefix + key, cap, ms(leaseMs), lease.token)) === 1 ? lease : null;
    },
    renew: async (lease, leaseMs) => (await renew(prefix + lease.key, ms(leaseMs), lease.token)) === 1,
    release: async (lease) => {
      await client.zrem(prefix + lease.key, lease.token);
    },
  };
}

function createRedisHealth(client: Redis, prefix: string, retentionMs: number): HostHealth {
  const failure = luaCommand(client, 'mailverdictHealthFailure', HEALTH_FAILURE_LUA);
  const success = luaCommand(client, 'mailverdictHealthSuccess', HEALTH_SUCCESS_LUA);
  const rest = luaCommand(client, 'mailverdictHealthRest', HEALTH_REST_LUA);
  return {
    get: async (key) => {
      const [f, nb] = await client.hmget(prefix + key, 'f', 'nb');
      return { failuresInARow: Number(f ?? 0), notBefore: Number(nb ?? 0) };
    },
    recordFailure: async (key, baseMs, maxMs): Promise<HealthState> => {
      const reply = (await failure(prefix + key, baseMs, maxMs, retentionMs)) as [number, number];
      return { failuresInARow: Number(reply[0]), notBefore: Number(reply[1]) };
    },
    recordSuccess: async (key) => {
      await success(prefix + key);
    },
    restUntil: async (key, until) => {
      await rest(prefix + key, Math.ceil(until), retentionMs);
    },
  };
}

function createRedisCache<V>(client: Redis, prefix: string): SharedCache<V> {
  return {
    get: async (key) => {
      const raw = await client.get(prefix + key);
      return raw === null ? undefined : (JSON.parse(raw) as V);
    },
    set: async (key, value, ttlMs) => {
      // undefined means absent (and has no JSON form).
      if (value === undefined) await client.del(prefix + key);
      else await client.set(prefix + key, JSON.stringify(value), 'PX', ms(ttlMs));
    },
    delete: async (key) => {
      await client.del(prefix + key);
    },
  };
}
