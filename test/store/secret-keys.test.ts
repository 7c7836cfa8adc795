/**
 * Where the store's secret key comes from and what happens when it changes (store/secret-keys.ts,
 * services/operators/secrets.service.ts; docs/security.md, "Secrets at rest"): the SQLite data directory's
 * key file, a wrong key, a rotation with the previous key, and PostgreSQL refusing to start
 * without a key.
 */
import { mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Kysely } from 'kysely';
import pino from 'pino';
import { afterEach, describe, expect, it } from 'vitest';
import { ManualClock } from '../../src/clock.js';
import { ConfigError, loadConfig, type SecretKeySettings } from '../../src/config.js';
import { createRuntime } from '../../src/runtime.js';
import { createAccount } from '../../src/services/accounts/accounts.service.js';
import { rotateSecrets } from '../../src/services/operators/secrets.service.js';
import { webhookSecretFor } from '../../src/services/webhooks/secret.js';
import { openDatabase } from '../../src/store/db.js';
import { migrateToLatest } from '../../src/store/migrate.js';
import type { Database } from '../../src/store/schema.js';
import { generateSecretKeyText, parseSecretKey, SecretKeyError } from '../../src/store/secret-box.js';
import { loadSecretBox, SECRET_KEY_FILE } from '../../src/store/secret-keys.js';
import { openTestStore, testBackends, type TestStore } from '../kit/store-harness.js';

const clock = new ManualClock('2026-03-10T12:00:00.000Z');
const keyed = (key: string, previousKey: string | null = null): SecretKeySettings => ({
  key,
  keyFile: null,
  previousKey,
  previousKeyFile: null,
});

const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

async function storeOn(backend: 'sqlite' | 'postgres'): Promise<TestStore> {
  const store = await openTestStore(backend);
  cleanups.push(() => store.close());
  return store;
}

/** The same store opened again, as another process would, with other key settings. */
async function reopen(store: TestStore, secrets: SecretKeySettings): Promise<Kysely<Database>> {
  const db = openDatabase({ ...store.settings, secrets });
  cleanups.push(() => db.destroy());
  await migrateToLatest(db);
  return db;
}

async function storedSecret(db: Kysely<Database>, accountId: string): Promise<string> {
  const row = await db
    .selectFrom('accounts')
    .select('webhook_secret')
    .where('id', '=', accountId)
    .executeTakeFirstOrThrow();
  return row.webhook_secret!;
}

describe('the data directory’s key file (SQLite, no key configured)', () => {
  it('is made at first start, readable by its owner only, and used again by the next process', async () => {
    const store = await storeOn('sqlite');
    const path = join(store.dir, SECRET_KEY_FILE);
    expect(statSync(path).mode & 0o777).toBe(0o600);
    expect(parseSecretKey(readFileSync(path, 'utf8'), path).key).toHaveLength(32);
    const account = await createAccount(store.db, clock, { email: 'a@example.org' });
    const secret = await webhookSecretFor(store.db, account.id);
    const other = await store.openAnother();
    expect(await webhookSecretFor(other, account.id)).toBe(secret);
  });

  it('a store restored without its key file refuses to start rather than run with a new key', async () => {
    const store = await storeOn('sqlite');
    const account = await createAccount(store.db, clock, { email: 'a@example.org' });
    await webhookSecretFor(store.db, account.id);
    rmSync(join(store.dir, SECRET_KEY_FILE));
    await expect(
      createRuntime(loadConfig({ dataDir: store.dir }, {}), { logger: pino({ level: 'silent' }) }),
    ).rejects.toThrow(/which this process does not have.*secret\.key it was made with/);
  });

  it('is the same key for processes starting at once', () => {
    const dir = mkdtempSync(join(tmpdir(), 'mailverdict-key-'));
    cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
    const boxes = Array.from({ length: 5 }, () => loadSecretBox({ dataDir: dir }));
    expect(new Set(boxes.map((b) => b.currentKeyId())).size).toBe(1);
  });

  it('is not used when a key is configured', () => {
    const dir = mkdtempSync(join(tmpdir(), 'mailverdict-key-'));
    cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
    const key = generateSecretKeyText();
    const keyFile = join(dir, 'configured.key');
    writeFileSync(keyFile, `${key}\n`, { mode: 0o600 });
    const fromFile = loadSecretBox({ dataDir: dir, secrets: { ...keyed(key), key: null, keyFile } });
    expect(fromFile.currentKeyId()).toBe(parseSecretKey(key, 'k').id);
    expect(loadSecretBox({ dataDir: dir, secrets: keyed(key) }).currentKeyId()).toBe(fromFile.currentKeyId());
    expect(() => statSync(join(dir, SECRET_KEY_FILE))).toThrow();
  });

  it('names the setting when a configured key file cannot be read', () => {
    expect(() =>
      loadSecretBox({
        dataDir: tmpdir(),
        secrets: {
          key: null,
          keyFile: '/nonexistent/mailverdict.key',
          previousKey: null,
          previousKeyFile: null,
        },
      }),
    ).toThrow(/--secret-key-file: cannot read \/nonexistent\/mailverdict.key/);
  });
});

describe.each(testBackends())('secrets at rest on %s', (backend) => {
  it('a process with another key refuses to read a secret instead of answering garbage', async () => {
    const store = await storeOn(backend);
    const account = await createAccount(store.db, clock, { email: 'a@example.org' });
    await webhookSecretFor(store.db, account.id);
    const wrong = await reopen(store, keyed(generateSecretKeyText()));
    await expect(webhookSecretFor(wrong, account.id)).rejects.toThrow(SecretKeyError);
    await expect(webhookSecretFor(wrong, account.id)).rejects.toThrow(/neither the current secret key/);
  });

  it('a process given another key refuses to start, naming the key it lacks', async () => {
    const store = await storeOn(backend);
    const account = await createAccount(store.db, clock, { email: 'a@example.org' });
    await webhookSecretFor(store.db, account.id);
    const sealedWith = (await storedSecret(store.db, account.id)).split(':')[2]!;
    const flags = {
      dataDir: store.dir,
      ...(store.settings.databaseUrl ? { databaseUrl: store.settings.databaseUrl } : {}),
      secretKey: generateSecretKeyText(),
    };
    await expect(createRuntime(loadConfig(flags, {}), { logger: pino({ level: 'silent' }) })).rejects.toThrow(
      new RegExp(`sealed with key ${sealedWith}, which this process does not have`),
    );
    // With the store's key as the previous one (a rotation under way) it starts.
    const storeKey =
      store.settings.secrets?.key ?? readFileSync(join(store.dir, SECRET_KEY_FILE), 'utf8').trim();
    const during = await createRuntime(loadConfig({ ...flags, secretKeyPrevious: storeKey }, {}), {
      logger: pino({ level: 'silent' }),
    });
    await during.close();
  });

  it('rotates: the previous key reads, `rotate` seals every secret with the current key, then the old key is not needed', async () => {
    const oldKey = generateSecretKeyText();
    const newKey = generateSecretKeyText();
    const store = await storeOn(backend);
    const before = await reopen(store, keyed(oldKey));
    const a = await createAccount(before, clock, { email: 'a@example.org' });
    const b = await createAccount(before, clock, { email: 'b@example.org' });
    const c = await createAccount(before, clock, { email: 'c@example.org' });
    const secretA = await webhookSecretFor(before, a.id);
    const secretB = await webhookSecretFor(before, b.id);
    // An older version's plaintext is sealed by the rotation too.
    await before
      .updateTable('accounts')
      .set({ webhook_secret: 'whsec_legacy' })
      .where('id', '=', c.id)
      .execute();

    const during = await reopen(store, keyed(newKey, oldKey));
    expect(await webhookSecretFor(during, a.id)).toBe(secretA);
    expect(await rotateSecrets(during)).toEqual({
      'accounts.webhook_secret': 3,
      'member_two_factor.secret': 0,
      'outcome_sources.verify_key': 0,
    });
    expect(await rotateSecrets(during)).toEqual({
      'accounts.webhook_secret': 0,
      'member_two_factor.secret': 0,
      'outcome_sources.verify_key': 0,
    });

    const after = await reopen(store, keyed(newKey));
    const newId = parseSecretKey(newKey, 'k').id;
    for (const id of [a.id, b.id, c.id]) expect((await storedSecret(after, id)).split(':')[2]).toBe(newId);
    expect(await webhookSecretFor(after, a.id)).toBe(secretA);
    expect(await webhookSecretFor(after, b.id)).toBe(secretB);
    expect(await webhookSecretFor(after, c.id)).toBe('whsec_legacy');
    const oldOnly = await reopen(store, keyed(oldKey));
    await expect(webhookSecretFor(oldOnly, a.id)).rejects.toThrow(SecretKeyError);
  });

  it('a rotation without the key a secret was sealed with stops and changes nothing', async () => {
    const store = await storeOn(backend);
    const account = await createAccount(store.db, clock, { email: 'a@example.org' });
    await webhookSecretFor(store.db, account.id);
    const stored = await storedSecret(store.db, account.id);
    const stranger = await reopen(store, keyed(generateSecretKeyText()));
    await expect(rotateSecrets(stranger)).rejects.toThrow(SecretKeyError);
    expect(await storedSecret(store.db, account.id)).toBe(stored);
  });
});

describe('start-up on PostgreSQL', () => {
  it('refuses without a secret key, naming the settings, before it connects', async () => {
    // Port 1: nothing listens; the refusal comes first.
    const config = loadConfig(
      { databaseUrl: 'postgres://mailverdict@127.0.0.1:1/none', dataDir: tmpdir() },
      {},
    );
    const started = createRuntime(config, { logger: pino({ level: 'silent' }) });
    await expect(started).rejects.toThrow(ConfigError);
    await expect(createRuntime(config, { logger: pino({ level: 'silent' }) })).rejects.toThrow(
      /no secret key is set.*--secret-key-file.*MAILVERDICT_SECRET_KEY.*secrets generate-key/,
    );
  });
});
