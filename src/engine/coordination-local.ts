/**
 * The in-process EngineCoordination: what one process uses when no Redis is configured. Each
 * process then applies its own caps (several processes on one SQLite file do not share them).
 */
import { randomUUID } from 'node:crypto';
import { LRUCache } from 'lru-cache';
import { TtlMap } from './ttl-map.js';
import type {
  EngineCoordination,
  HealthState,
  HostHealth,
  SessionSlots,
  SharedCache,
  SlotLease,
} from './coordination.js';

export interface LocalCoordinationOptions {
  /** Epoch ms; injectable for tests. */
  now?: () => number;
  /** Entries per cache namespace and per health table; the least recently used go first. */
  maxEntries?: number;
}

const DEFAULT_MAX_ENTRIES = 100_000;

export function createLocalCoordination(options: LocalCoordinationOptions = {}): EngineCoordination {
  const now = options.now ?? Date.now;
  const maxEntries = options.maxEntries ?? DEFAULT_MAX_ENTRIES;
  const caches = new Map<string, SharedCache<unknown>>();
  return {
    slots: createLocalSlots(now),
    health: createLocalHealth(now, maxEntries),
    cache<V>(namespace: string): SharedCache<V> {
      let cache = caches.get(namespace);
      if (cache === undefined) {
        cache = createLocalCache<unknown>(now, maxEntries);
        caches.set(namespace, cache);
      }
      return cache as SharedCache<V>;
    },
    close: async () => {
      caches.clear();
    },
  };
}

/** A size-bounded TTL map behind the SharedCache interface. */
export function createLocalCache<V>(now: () => number, maxEntries: number): SharedCache<V> {
  const entries = new TtlMap<string, V>(maxEntries, now);
  return {
    get: async (key) => entries.get(key),
    set: async (key, value, ttlMs) => entries.set(key, value, ttlMs),
    delete: async (key) => entries.delete(key),
  };
}

function createLocalSlots(now: () => number): SessionSlots {
  // key -> token -> lease expiry (epoch ms)
  const held = new Map<string, Map<string, number>>();
  const live = (key: string): Map<string, number> => {
    let tokens = held.get(key);
    if (tokens === undefined) {
      tokens = new Map();
      held.set(key, tokens);
    }
    const t = now();
    for (const [token, expiresAt] of tokens) if (expiresAt <= t) tokens.delete(token);
    return tokens;
  };
  return {
    tryAcquire: async (key, cap, leaseMs) => {
      const tokens = live(key);
      if (tokens.size >= cap) return null;
      const lease: SlotLease = { key, token: randomUUID() };
      tokens.set(lease.token, now() + leaseMs);
      return lease;
    },
    renew: async (lease, leaseMs) => {
      const tokens = live(lease.key);
      if (!tokens.has(lease.token)) return false;
      tokens.set(lease.token, now() + leaseMs);
      return true;
    },
    release: async (lease) => {
      const tokens = held.get(lease.key);
      if (tokens === undefined) return;
      tokens.delete(lease.token);
      if (tokens.size === 0) held.delete(lease.key);
    },
  };
}

/** Failure streaks and back-off of this process only (the single prober's, when nothing is shared). */
export function createLocalHealth(now: () => number, maxEntries = DEFAULT_MAX_ENTRIES): HostHealth {
  const states = new LRUCache<string, HealthState>({ max: maxEntries });
  const get = (key: string): HealthState => states.get(key) ?? { failuresInARow: 0, notBefore: 0 };
  return {
    get: async (key) => ({ ...get(key) }),
    recordFailure: async (key, baseMs, maxMs) => {
      const state = get(key);
      const failuresInARow = state.failuresInARow + 1;
      const delay = Math.min(maxMs, baseMs * 2 ** Math.min(30, failuresInARow - 1));
      const next = { failuresInARow, notBefore: Math.max(state.notBefore, now() + delay) };
      states.set(key, next);
      return { ...next };
    },
    recordSuccess: async (key) => {
      const state = states.get(key);
      if (state !== undefined) states.set(key, { ...state, failuresInARow: 0 });
    },
    restUntil: async (key, until) => {
      const state = get(key);
      states.set(key, { ...state, notBefore: Math.max(state.notBefore, until) });
    },
  };
}
