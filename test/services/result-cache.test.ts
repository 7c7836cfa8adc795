/**
 * The result cache (services/verify/result-cache.ts) as a specification: what it keeps, for how long,
 * under which key, and what happens when its store fails. Time is a ManualClock; the Redis store
 * runs against the real Redis of MAILVERDICT_TEST_REDIS_URL (skipped, with one line, without it).
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { HOUR, ManualClock } from '../../src/clock.js';
import { ConfigError, loadConfig } from '../../src/config.js';
import type { Status, VerificationResult, Verifier } from '../../src/engine/types.js';
import { createVerifier } from '../../src/engine/verifier.js';
import { createRedisResultStore } from '../../src/redis/result-store.js';
import {
  cacheKey,
  createMemoryResultStore,
  createResultCache,
  NO_RESULT_CACHE,
  resultCacheFromSettings,
  type ResultCache,
  type ResultStore,
  type StoredResult,
  type StoreWrite,
} from '../../src/services/verify/result-cache.js';
import { skipWithoutRedis, testRedis, unreachableRedisUrl, type TestRedis } from '../redis/redis-kit.js';

const TTL: Record<Status, number> = {
  deliverable: 24 * HOUR,
  undeliverable: 24 * HOUR,
  risky: HOUR,
  unknown: 0,
};

let verifier: Verifier;
beforeAll(() => {
  verifier = createVerifier(loadConfig({}, {}).engine);
});
afterAll(async () => {
  await verifier.close();
});

/** A result as the engine builds it (offline checks), with the status and reason a probe found. */
function resultOf(
  email: string,
  status: Status,
  reason: VerificationResult['reason'] = null,
): VerificationResult {
  // latency_ms is the offline verification's own time: fixed, so that two results of one address compare equal.
  return { ...verifier.verifyOffline(email), status, reason, valid: status === 'deliverable', latency_ms: 0 };
}

/** A memory store that also records the keys written. */
function recordingStore(): ResultStore & { written: StoreWrite[] } {
  const inner = createMemoryResultStore(100);
  const written: StoreWrite[] = [];
  return {
    written,
    getMany: (keys) => inner.getMany(keys),
    setMany: (writes) => {
      written.push(...writes);
      return inner.setMany(writes);
    },
  };
}

function memoryCache(clock: ManualClock, ttlMs = TTL): ResultCache {
  return createResultCache({ store: createMemoryResultStore(100), ttlMs, clock });
}

describe('the result cache', () => {
  it("gives a result again, with the time it was checked, until its status's TTL runs out", async () => {
    const clock = new ManualClock();
    const cache = memoryCache(clock);
    const checkedAt = clock.now();
    await cache.store('acc_1', [resultOf('anna@good.test', 'deliverable')]);
    clock.advance(24 * HOUR - 1);
    const [hit] = await cache.lookUp('acc_1', ['anna@good.test']);
    expect(hit?.result.status).toBe('deliverable');
    expect(hit?.checkedAt).toEqual(checkedAt);
    clock.advance(1);
    expect(await cache.lookUp('acc_1', ['anna@good.test'])).toEqual([undefined]);
  });

  it('gives a result cached before checks.mx.provider existed the provider of its MX records', async () => {
    const store = createMemoryResultStore(10);
    const cache = createResultCache({ store, ttlMs: TTL, clock: new ManualClock() });
    const fresh = resultOf('anna@tenant.test', 'deliverable');
    // As an older process wrote it: MX records, and no provider field.
    const { provider: _dropped, ...oldMx } = {
      ...fresh.checks.mx,
      records: [{ exchange: 'tenant-test.mail.protection.outlook.com', priority: 0 }],
    };
    const old = { ...fresh, checks: { ...fresh.checks, mx: oldMx } } as unknown as VerificationResult;
    await cache.store('acc_1', [old]);
    const [hit] = await cache.lookUp('acc_1', ['anna@tenant.test']);
    expect(hit?.result.checks.mx.provider).toBe('microsoft');
  });

  it('keeps each status for its own TTL and never keeps a status whose TTL is 0', async () => {
    const clock = new ManualClock();
    const cache = memoryCache(clock);
    await cache.store('acc_1', [
      resultOf('a@good.test', 'undeliverable', 'smtp_rejected'),
      resultOf('b@good.test', 'risky', 'catch_all'),
      resultOf('c@good.test', 'unknown', 'greylisted'),
    ]);
    const statuses = async () =>
      (await cache.lookUp('acc_1', ['a@good.test', 'b@good.test', 'c@good.test'])).map(
        (h) => h?.result.status,
      );
    expect(await statuses()).toEqual(['undeliverable', 'risky', undefined]);
    clock.advance(HOUR);
    expect(await statuses()).toEqual(['undeliverable', undefined, undefined]);
  });

  it('answers with the latest result: a newer one replaces the entry, a newer uncached one removes it', async () => {
    const clock = new ManualClock();
    const cache = memoryCache(clock);
    await cache.store('acc_1', [resultOf('anna@good.test', 'deliverable')]);
    await cache.store('acc_1', [resultOf('anna@good.test', 'undeliverable', 'smtp_rejected')]);
    expect((await cache.lookUp('acc_1', ['anna@good.test']))[0]?.result.status).toBe('undeliverable');
    await cache.store('acc_1', [resultOf('anna@good.test', 'unknown', 'smtp_timeout')]);
    expect(await cache.lookUp('acc_1', ['anna@good.test'])).toEqual([undefined]);
  });

  it("keeps one account's answers from every other account", async () => {
    const cache = memoryCache(new ManualClock());
    await cache.store('acc_1', [resultOf('anna@good.test', 'deliverable')]);
    expect(await cache.lookUp('acc_2', ['anna@good.test'])).toEqual([undefined]);
  });

  it('finds an address whatever the case of its domain, but not with another local part case', async () => {
    const cache = memoryCache(new ManualClock());
    await cache.store('acc_1', [resultOf('Anna@good.test', 'deliverable')]);
    const hits = await cache.lookUp('acc_1', ['Anna@GOOD.Test', 'anna@good.test', 'not an address']);
    expect(hits.map((h) => h?.result.status)).toEqual(['deliverable', undefined, undefined]);
  });

  it('never keeps the offline test-mode result nor a malformed address', async () => {
    const store = recordingStore();
    const cache = createResultCache({ store, ttlMs: { ...TTL, unknown: HOUR }, clock: new ManualClock() });
    await cache.store('acc_1', [
      verifier.verifyOffline('anna@good.test'),
      verifier.verifyOffline('not an address'),
    ]);
    expect(verifier.verifyOffline('anna@good.test').reason).toBe('test_mode');
    expect(store.written).toEqual([]);
  });

  it('keys entries by a hash that names neither the address nor the account', async () => {
    const store = recordingStore();
    const cache = createResultCache({ store, ttlMs: TTL, clock: new ManualClock() });
    await cache.store('acc_1', [resultOf('anna@good.test', 'deliverable')]);
    expect(store.written).toHaveLength(1);
    const { key } = store.written[0]!;
    expect(key).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(key).not.toContain('anna');
    expect(key).not.toContain('good');
  });

  it('writes an address once when a batch holds it twice, the last result winning', async () => {
    const store = recordingStore();
    const cache = createResultCache({ store, ttlMs: TTL, clock: new ManualClock() });
    await cache.store('acc_1', [
      resultOf('anna@good.test', 'unknown', 'smtp_timeout'),
      resultOf('anna@GOOD.test', 'deliverable'),
    ]);
    expect(store.written.map((w) => w.entry?.result.status)).toEqual(['deliverable']);
  });

  it('takes a failing store as a miss and drops a failed write, telling onError', async () => {
    const errors: unknown[] = [];
    const broken: ResultStore = {
      getMany: () => Promise.reject(new Error('store down')),
      setMany: () => Promise.reject(new Error('store down')),
    };
    const cache = createResultCache({
      store: broken,
      ttlMs: TTL,
      clock: new ManualClock(),
      onError: (e) => errors.push(e),
    });
    await expect(cache.store('acc_1', [resultOf('anna@good.test', 'deliverable')])).resolves.toBeUndefined();
    await expect(cache.lookUp('acc_1', ['anna@good.test'])).resolves.toEqual([undefined]);
    expect(errors).toHaveLength(2);
  });

  it('keeps at most maxEntries in memory, dropping the least recently used first', async () => {
    const cache = createResultCache({
      store: createMemoryResultStore(2),
      ttlMs: TTL,
      clock: new ManualClock(),
    });
    await cache.store('acc_1', [
      resultOf('a@good.test', 'deliverable'),
      resultOf('b@good.test', 'deliverable'),
    ]);
    await cache.lookUp('acc_1', ['a@good.test']);
    await cache.store('acc_1', [resultOf('c@good.test', 'deliverable')]);
    const hits = await cache.lookUp('acc_1', ['a@good.test', 'b@good.test', 'c@good.test']);
    expect(hits.map((h) => h !== undefined)).toEqual([true, false, true]);
  });
});

describe('the result cache in memory', () => {
  const entryOf = (email: string, status: Status = 'deliverable'): StoredResult => ({
    result: resultOf(email, status),
    checkedAt: 1_000,
    expiresAt: 2_000,
  });
  const keyOf = (email: string) => cacheKey('acc_1', email)!;

  it('keeps at most maxBytes of answers, dropping the least recently used first', async () => {
    const emails = ['a@good.test', 'b@good.test', 'c@good.test'];
    // Two entries fit, not three (the three are the same size).
    const store = createMemoryResultStore(100, 2 * (await bytesOf(emails[0]!)) + 10);
    await store.setMany(emails.slice(0, 2).map((e) => ({ key: keyOf(e), entry: entryOf(e) })));
    await store.getMany([keyOf('a@good.test')]);
    await store.setMany([{ key: keyOf('c@good.test'), entry: entryOf('c@good.test') }]);
    const found = await store.getMany(emails.map(keyOf));
    expect(found.map((f) => f?.result.email)).toEqual(['a@good.test', undefined, 'c@good.test']);
  });

  it('counts a long address for more bytes than a short one', async () => {
    const long = `${'l'.repeat(64)}@${'d'.repeat(63)}.${'e'.repeat(63)}.good.test`;
    const short = await bytesOf('a@good.test');
    // Room for three short answers holds one long one only.
    const store = createMemoryResultStore(100, 3 * short);
    const emails = [long, `${'m'.repeat(64)}@${long.split('@')[1]}`];
    await store.setMany(emails.map((e) => ({ key: keyOf(e), entry: entryOf(e) })));
    expect((await store.getMany(emails.map(keyOf))).map((f) => f !== undefined)).toEqual([false, true]);
  });

  it('does not keep an answer larger than the whole bound, and drops the older one of its key', async () => {
    const store = createMemoryResultStore(100, (await bytesOf('a@good.test')) + 10);
    await store.setMany([{ key: keyOf('a@good.test'), entry: entryOf('a@good.test') }]);
    const big = entryOf('a@good.test', 'risky');
    big.result.checks.smtp.message = 'x'.repeat(1000);
    await store.setMany([{ key: keyOf('a@good.test'), entry: big }]);
    expect(await store.getMany([keyOf('a@good.test')])).toEqual([undefined]);
  });

  it('gives back each entry exactly as stored, whatever the shapes of its objects', async () => {
    const store = createMemoryResultStore(100);
    const entries = [entryOf('a@good.test'), entryOf('b@good.test', 'risky')];
    entries[1]!.result.checks.mx.records = [
      { exchange: 'mx1.good.test', priority: 10 },
      { exchange: 'mx2.good.test', priority: 20 },
    ];
    Object.assign(entries[1]!.result.checks.smtp, {
      extra: { nested: [1, 'two', null, [true]] },
      gone: undefined,
    });
    await store.setMany(entries.map((entry) => ({ key: keyOf(entry.result.email), entry })));
    const found = await store.getMany(entries.map((e) => keyOf(e.result.email)));
    expect(found).toEqual(JSON.parse(JSON.stringify(entries)));
    expect(found[1]!.result.checks.smtp).not.toHaveProperty('gone');
  });
});

/** The bytes an address's entry is counted for: the largest bound that still refuses it, plus one. */
async function bytesOf(email: string): Promise<number> {
  const entry = {
    key: cacheKey('acc_1', email)!,
    entry: { result: resultOf(email, 'deliverable'), checkedAt: 1_000, expiresAt: 2_000 },
  };
  let low = 1;
  let high = 100_000;
  while (low < high) {
    const mid = Math.floor((low + high) / 2);
    const store = createMemoryResultStore(10, mid);
    await store.setMany([entry]);
    if ((await store.getMany([entry.key]))[0] === undefined) low = mid + 1;
    else high = mid;
  }
  return low;
}

describe('the result cache settings', () => {
  it('default to 24 h for deliverable and undeliverable, 1 h for risky and none for unknown', () => {
    const { resultCache } = loadConfig({}, {});
    expect(resultCache.ttlMs).toEqual({
      deliverable: 24 * HOUR,
      undeliverable: 24 * HOUR,
      risky: HOUR,
      unknown: 0,
    });
    expect(resultCache.maxEntries).toBe(50_000);
    expect(resultCache.maxBytes).toBe(16_000_000);
    expect(loadConfig({}, { MAILVERDICT_RESULT_CACHE_MEMORY: '8' }).resultCache.maxBytes).toBe(8_000_000);
  });

  it('take a duration, or 0 or off for none, from a flag or MAILVERDICT_RESULT_CACHE_TTL_*', () => {
    const config = loadConfig(
      { resultCacheTtlRisky: 'off' },
      { MAILVERDICT_RESULT_CACHE_TTL_UNKNOWN: '5m', MAILVERDICT_RESULT_CACHE_TTL_DELIVERABLE: '0' },
    );
    expect(config.resultCache.ttlMs).toMatchObject({ risky: 0, unknown: 5 * 60_000, deliverable: 0 });
    expect(() => loadConfig({}, { MAILVERDICT_RESULT_CACHE_TTL_RISKY: 'soon' })).toThrow(ConfigError);
    expect(() => loadConfig({}, { MAILVERDICT_RESULT_CACHE_TTL_RISKY: 'soon' })).toThrow(
      /MAILVERDICT_RESULT_CACHE_TTL_RISKY/,
    );
  });

  it('turn the cache off when every TTL is 0, or without Redis when the memory size or bytes are 0', () => {
    const clock = new ManualClock();
    const off = (flags: Record<string, string>) =>
      resultCacheFromSettings({ settings: loadConfig(flags, {}).resultCache, clock, shared: null });
    expect(off({ resultCacheSize: '0' })).toBe(NO_RESULT_CACHE);
    expect(off({ resultCacheMemory: '0' })).toBe(NO_RESULT_CACHE);
    expect(
      off({
        resultCacheTtlDeliverable: '0',
        resultCacheTtlUndeliverable: '0',
        resultCacheTtlRisky: '0',
      }),
    ).toBe(NO_RESULT_CACHE);
    expect(off({})).not.toBe(NO_RESULT_CACHE);
  });
});

describe('the result cache in Redis', () => {
  const skip = skipWithoutRedis('result cache in Redis');
  let redis: TestRedis;
  afterEach(async () => {
    await redis?.close();
  });

  /** A cache as one process has it: its own connection, the shared prefix. */
  async function processCache(clock: ManualClock): Promise<ResultCache> {
    const client = await redis.connect();
    const store = createRedisResultStore(client, {
      keyPrefix: redis.prefix,
      now: () => clock.now().getTime(),
    });
    return createResultCache({ store, ttlMs: TTL, clock });
  }

  it.skipIf(skip)('is shared by two processes: what one stores, the other answers', async () => {
    redis = testRedis();
    const clock = new ManualClock();
    const [a, b] = [await processCache(clock), await processCache(clock)];
    await a.store('acc_1', [
      resultOf('anna@good.test', 'deliverable'),
      resultOf('bob@good.test', 'risky', 'catch_all'),
    ]);
    const hits = await b.lookUp('acc_1', ['anna@good.test', 'bob@good.test', 'carl@good.test']);
    expect(hits.map((h) => h?.result.status)).toEqual(['deliverable', 'risky', undefined]);
    expect(hits[0]?.result).toEqual(resultOf('anna@good.test', 'deliverable'));
    // The newer unknown result removes the entry for both.
    await b.store('acc_1', [resultOf('anna@good.test', 'unknown', 'smtp_timeout')]);
    expect(await a.lookUp('acc_1', ['anna@good.test'])).toEqual([undefined]);
  });

  it.skipIf(skip)('lets Redis expire an entry with its TTL, and judges expiry by the clock', async () => {
    redis = testRedis();
    const clock = new ManualClock();
    const cache = await processCache(clock);
    await cache.store('acc_1', [resultOf('anna@good.test', 'risky', 'catch_all')]);
    const client = await redis.connect();
    const keys = await client.keys(`${redis.prefix}*`);
    expect(keys).toHaveLength(1);
    expect(keys[0]).toMatch(new RegExp(`^${redis.prefix}result:[A-Za-z0-9_-]{43}$`));
    const pttl = await client.pttl(keys[0]!);
    expect(pttl).toBeGreaterThan(HOUR - 60_000);
    expect(pttl).toBeLessThanOrEqual(HOUR);
    clock.advance(HOUR);
    expect(await cache.lookUp('acc_1', ['anna@good.test'])).toEqual([undefined]);
  });

  it.skipIf(skip)('takes a damaged entry as a miss', async () => {
    redis = testRedis();
    const clock = new ManualClock();
    const cache = await processCache(clock);
    await cache.store('acc_1', [resultOf('anna@good.test', 'deliverable')]);
    const client = await redis.connect();
    const [key] = await client.keys(`${redis.prefix}*`);
    await client.set(key!, '{"not":"an entry"');
    expect(await cache.lookUp('acc_1', ['anna@good.test'])).toEqual([undefined]);
  });

  it.skipIf(skip)('is a miss, not an error, while Redis is unreachable', async () => {
    redis = testRedis(await unreachableRedisUrl());
    const clock = new ManualClock();
    const errors: unknown[] = [];
    const client = await redis.connect();
    const store = createRedisResultStore(client, {
      keyPrefix: redis.prefix,
      now: () => clock.now().getTime(),
    });
    const cache = createResultCache({ store, ttlMs: TTL, clock, onError: (e) => errors.push(e) });
    await cache.store('acc_1', [resultOf('anna@good.test', 'deliverable')]);
    expect(await cache.lookUp('acc_1', ['anna@good.test'])).toEqual([undefined]);
    expect(errors).toHaveLength(2);
  });
});
