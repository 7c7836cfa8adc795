/**
 * The key cache across processes on PostgreSQL: each "process" is its own Kysely instance (pool
 * and listening connection) on one schema. A change committed by one reaches the others through
 * NOTIFY; while a process's listening connection is down its cache answers nothing, and nothing
 * cached before the gap is served after it. (SQLite's watch: test/services/key-cache.test.ts.)
 */
import { once } from 'node:events';
import { connect, createServer, type AddressInfo, type Socket } from 'node:net';
import { Kysely, sql } from 'kysely';
import pg from 'pg';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ManualClock } from '../../src/clock.js';
import { createAccount, setAccountPlan } from '../../src/services/accounts/accounts.service.js';
import { createKeyCache, type KeyCache } from '../../src/services/keys/key-cache.js';
import {
  authenticateKey,
  createKey,
  revokeKey,
  type AuthenticatedKey,
} from '../../src/services/keys/keys.service.js';
import { storeBackend } from '../../src/store/backend.js';
import { createPostgresDialect } from '../../src/store/dialect/postgres-dialect.js';
import { migrateToLatest } from '../../src/store/migrate.js';
import type { Database } from '../../src/store/schema.js';
import { openTestStore, TEST_DATABASE_URL, testBackends, type TestStore } from '../kit/store-harness.js';
import { waitFor } from '../kit/wait-for.js';

const clock = new ManualClock();

/** Polls `read` every 2 ms until it returns something other than undefined; fails after `ms`. */
const eventually = <T>(
  read: () => T | undefined | Promise<T | undefined>,
  what: string,
  ms = 5000,
): Promise<T> => waitFor(what, async () => read(), ms, 2);

/** The change token once the listening connection is LISTENing. */
function listening(db: Kysely<Database>): Promise<number> {
  return eventually(() => storeBackend(db).changes.changeToken() ?? undefined, 'the listener');
}

/** Waits for the token to move past `from` (a notification arrived); returns the new token. */
function moved(db: Kysely<Database>, from: number): Promise<number> {
  return eventually(() => {
    const token = storeBackend(db).changes.changeToken();
    return token !== null && token !== from ? token : undefined;
  }, 'a change notification');
}

async function adminQuery(text: string, values: unknown[]): Promise<pg.QueryResult> {
  const admin = new pg.Client({ connectionString: TEST_DATABASE_URL! });
  await admin.connect();
  try {
    return await admin.query(text, values);
  } finally {
    await admin.end();
  }
}

/**
 * A TCP relay to the PostgreSQL server whose open connections can be frozen: they stay open but
 * carry nothing more, as when a network path is lost silently. Later connections flow normally.
 */
async function freezableProxy(target: URL) {
  const pairs: [Socket, Socket][] = [];
  const frozen: Socket[] = [];
  const server = createServer((client) => {
    const upstream = connect(Number(target.port || 5432), target.hostname);
    client.pipe(upstream).pipe(client);
    client.on('error', () => upstream.destroy());
    upstream.on('error', () => client.destroy());
    pairs.push([client, upstream]);
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const url = new URL(target);
  url.hostname = '127.0.0.1';
  url.port = String((server.address() as AddressInfo).port);
  return {
    url: url.toString(),
    freezeOpenConnections(): void {
      for (const [client, upstream] of pairs.splice(0)) {
        client.unpipe(upstream);
        upstream.unpipe(client);
        client.pause();
        upstream.pause();
        frozen.push(client, upstream);
      }
    },
    async close(): Promise<void> {
      for (const socket of [...frozen, ...pairs.flat()]) socket.destroy();
      server.close();
      await once(server, 'close');
    },
  };
}

describe.skipIf(!testBackends().includes('postgres'))('the key cache on PostgreSQL', () => {
  let store: TestStore;
  /** Process A authenticates with a cache; process B is where changes are made. */
  let a: Kysely<Database>;
  let b: Kysely<Database>;
  let cache: KeyCache<AuthenticatedKey>;
  let accountId: string;
  beforeEach(async () => {
    store = await openTestStore('postgres');
    a = store.db;
    b = await store.openAnother();
    cache = createKeyCache();
    accountId = (await createAccount(b, clock, { email: 'c@example.org', rateLimit: 5 })).id;
  });
  afterEach(async () => {
    await store.close();
  });

  /**
   * Drops the change triggers of this schema: a process's own notification would arrive a moment
   * after its write anyway, and now only what the process notices itself can move its token.
   */
  async function withoutNotifications(): Promise<void> {
    await sql`drop trigger api_keys_notify_change on api_keys`.execute(b);
    await sql`drop trigger accounts_notify_change on accounts`.execute(b);
  }

  /** The application_name of this store's listening connections (named after their schema). */
  async function listenerName(): Promise<string> {
    return `mailverdict listener ${await storeBackend(b).migrationSchema(b)}`;
  }

  it('answers a key seen before from memory while nothing changed', async () => {
    const { key } = await createKey(b, clock, { accountId, kind: 'test' });
    await listening(a);
    const first = await authenticateKey(a, key, cache);
    // The same object: nothing was read from the store.
    expect(await authenticateKey(a, key, cache)).toBe(first);
  });

  it('refuses a cached key revoked by another process once its notification has arrived', async () => {
    const { key, record } = await createKey(b, clock, { accountId, kind: 'test' });
    const token = await listening(a);
    const first = await authenticateKey(a, key, cache);
    expect(await authenticateKey(a, key, cache)).toBe(first);
    await revokeKey(b, clock, record.id);
    await moved(a, token);
    await expect(authenticateKey(a, key, cache)).rejects.toMatchObject({ code: 'revoked_api_key' });
  });

  it("picks up an account's new plan changed by another process", async () => {
    const { key } = await createKey(b, clock, { accountId, kind: 'live' });
    const token = await listening(a);
    expect(await authenticateKey(a, key, cache)).toMatchObject({ accountPlan: 'free' });
    await setAccountPlan(b, clock, accountId, 'pro');
    await moved(a, token);
    expect(await authenticateKey(a, key, cache)).toMatchObject({ accountPlan: 'pro' });
  });

  it('refuses a cached key revoked through the same process at once, before its own notification', async () => {
    const { key, record } = await createKey(b, clock, { accountId, kind: 'test' });
    await withoutNotifications();
    await listening(a);
    await authenticateKey(a, key, cache);
    await revokeKey(a, clock, record.id);
    await expect(authenticateKey(a, key, cache)).rejects.toMatchObject({ code: 'revoked_api_key' });
  });

  it('drops what was cached while a transaction of this process revoked the key, once it commits', async () => {
    const { key, record } = await createKey(b, clock, { accountId, kind: 'test' });
    await withoutNotifications();
    await listening(a);
    await a.transaction().execute(async (trx) => {
      await revokeKey(trx, clock, record.id);
      // Another request of this process, outside the transaction, still sees the key live and caches it.
      const live = await authenticateKey(a, key, cache);
      expect(await authenticateKey(a, key, cache)).toBe(live);
    });
    await expect(authenticateKey(a, key, cache)).rejects.toMatchObject({ code: 'revoked_api_key' });
  });

  it('ignores changes to the same tables in another schema', async () => {
    const elsewhere = await openTestStore('postgres');
    try {
      const token = await listening(a);
      await createAccount(elsewhere.db, clock, { email: 'elsewhere@example.org' });
      // Committed after the other schema's change: once it is seen, the other one would have been too.
      await createAccount(b, clock, { email: 'here@example.org' });
      expect(await moved(a, token)).toBe(token + 1);
    } finally {
      await elsewhere.close();
    }
  });

  it('caches nothing while its listening connection is down, and nothing cached before the gap after it', async () => {
    // A process whose listener waits a whole second before reconnecting: a gap long enough to act in.
    const c = new Kysely<Database>({
      dialect: createPostgresDialect({
        url: store.settings.databaseUrl!,
        poolSize: 2,
        notifications: { retryDelaysMs: [1000] },
      }),
    });
    try {
      // As every process does at start; the listener opens only once the store has been used.
      await migrateToLatest(c);
      const revoked = await createKey(b, clock, { accountId, kind: 'test' });
      const other = await createKey(b, clock, { accountId, kind: 'test' });
      await listening(c);
      const cached = await authenticateKey(c, revoked.key, cache);
      expect(await authenticateKey(c, revoked.key, cache)).toBe(cached);

      const killed = await adminQuery(
        `select pg_terminate_backend(pid) from pg_stat_activity where application_name = $1`,
        [await listenerName()],
      );
      expect(killed.rowCount).toBe(1);
      await eventually(
        () => (storeBackend(c).changes.changeToken() === null ? true : undefined),
        'the listener to be seen gone',
      );

      await revokeKey(b, clock, revoked.record.id);
      // Still in the gap: every request reads the store.
      expect(storeBackend(c).changes.changeToken()).toBeNull();
      const once = await authenticateKey(c, other.key, cache);
      expect(await authenticateKey(c, other.key, cache)).not.toBe(once);

      await listening(c);
      await expect(authenticateKey(c, revoked.key, cache)).rejects.toMatchObject({
        code: 'revoked_api_key',
      });
    } finally {
      await c.destroy();
    }
  });

  it('gives up a listening connection that silently stops answering, within the heartbeat bound', async () => {
    const proxy = await freezableProxy(new URL(store.settings.databaseUrl!));
    const c = new Kysely<Database>({
      dialect: createPostgresDialect({
        url: proxy.url,
        poolSize: 2,
        notifications: { heartbeatMs: 100, heartbeatTimeoutMs: 200, retryDelaysMs: [50] },
      }),
    });
    try {
      await migrateToLatest(c);
      await listening(c);
      // The network path is lost without a FIN: bytes stop flowing, no socket closes.
      proxy.freezeOpenConnections();
      // Heartbeats every 100 ms, given up after 200 ms without an answer; without them a frozen
      // path is noticed only by TCP's own timeouts (minutes), far past this generous bound.
      await eventually(
        () => (storeBackend(c).changes.changeToken() === null ? true : undefined),
        'the listener to be given up',
        15_000,
      );
      // New connections get through: it comes back.
      await listening(c);
    } finally {
      await proxy.close();
      await c.destroy();
    }
  });

  it('closes its listening connection when the store is destroyed', async () => {
    await listening(a);
    const name = await listenerName();
    const listeners = () =>
      adminQuery(`select pid from pg_stat_activity where application_name = $1`, [name]).then(
        (r) => r.rowCount,
      );
    expect(await listeners()).toBe(1);
    await a.destroy();
    await eventually(async () => ((await listeners()) === 0 ? true : undefined), 'the listener to close');
  });
});
