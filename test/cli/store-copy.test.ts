/**
 * `mailverdict store copy`: the real command, from a real SQLite store (built by the API and a
 * worker: accounts, keys, usage, a webhook secret, jobs with chunks and results, idempotency
 * keys, deliveries and their attempts) into a fresh PostgreSQL schema. Without
 * MAILVERDICT_TEST_DATABASE_URL the PostgreSQL cases are skipped (testBackends prints one line).
 */
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { once } from 'node:events';
import http from 'node:http';
import { Readable } from 'node:stream';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Migrator, sql, type Kysely } from 'kysely';
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DeliveryRunner } from '../../src/jobs/delivery-runner.js';
import { getJobDetail } from '../../src/services/batches/job-list.service.js';
import { acceptLink, issueInvitation } from '../../src/services/people/members.service.js';
import { createSession } from '../../src/services/people/sessions.service.js';
import { uploadList } from '../../src/services/lists/uploads.service.js';
import { runScheduledLists } from '../../src/services/lists/list-runs.service.js';
import { setSchedule } from '../../src/services/lists/list-schedule.service.js';
import { DAY } from '../../src/clock.js';
import { insertBootstrap } from '../../src/store/bootstrap.store.js';
import { insertEmailChange } from '../../src/store/person.store.js';
import { recordKeyUse } from '../../src/store/key-usage.store.js';
import { countKeyDay } from '../../src/store/key.store.js';
import { addSignInFailure } from '../../src/store/session.store.js';
import { recordAudit } from '../../src/services/accounts/audit.service.js';
import {
  confirmEnrolment,
  issueChallenge,
  startEnrolment,
  totpCode,
} from '../../src/services/people/two-factor.service.js';
import { authenticateKey, createKey, revokeKey } from '../../src/services/keys/keys.service.js';
import { plansFromConfig } from '../../src/services/usage/plans.js';
import { consumeQuota } from '../../src/services/usage/usage.service.js';
import { webhookSecretFor } from '../../src/services/webhooks/secret.js';
import { copyStore } from '../../src/services/operators/store-copy.service.js';
import {
  COPIED_TABLES,
  openSqliteSource,
  RUNTIME_TABLES,
  type TableName,
} from '../../src/store/copy.store.js';
import { openDatabase } from '../../src/store/db.js';
import { SECRET_KEY_FILE } from '../../src/store/secret-keys.js';
import { migrations } from '../../src/store/migrations/index.js';
import { createFilter } from '../../src/services/outcomes/filters.service.js';
import { takeOutcomes } from '../../src/services/outcomes/intake.service.js';
import { createOutcomeSource } from '../../src/services/outcomes/sources.service.js';
import { recordNonce } from '../../src/store/outcome-source.store.js';
import type { Database } from '../../src/store/schema.js';
import { createJobsHarness, fixtureEmails, type JobsHarness } from '../kit/jobs-kit.js';
import { createTestSchema, openTestStore, tableNames, testBackends } from '../kit/store-harness.js';
import { runCli } from '../kit/cli.js';

const backends = testBackends();
/** Nothing listens there: a refusal that comes before the target is opened never notices. */
const UNREACHABLE_TARGET = 'postgres://nobody@127.0.0.1:1/none';
const BOOKKEEPING = ['kysely_migration', 'kysely_migration_lock'];

const cleanups: (() => Promise<void> | void)[] = [];
afterAll(async () => {
  while (cleanups.length > 0) await cleanups.pop()!();
});

function tempDir(): string {
  const dir = mkdtempSync(join(tmpdir(), 'mailverdict-copy-'));
  cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
  return dir;
}

type Dump = Record<string, Record<string, unknown>[]>;

/** Every row of every copied table, sorted by primary key in JS (the two backends collate text differently). */
async function dump(db: Kysely<Database>): Promise<Dump> {
  const out: Dump = {};
  for (const table of COPIED_TABLES) {
    const { rows } = await sql<Record<string, unknown>>`select * from ${sql.table(table.name)}`.execute(db);
    const keyOf = (r: Record<string, unknown>) => JSON.stringify(table.key.map((c) => r[c]));
    out[table.name] = rows.sort((a, b) => (keyOf(a) < keyOf(b) ? -1 : keyOf(a) > keyOf(b) ? 1 : 0));
  }
  return out;
}

function counts(d: Dump): Record<string, number> {
  return Object.fromEntries(Object.entries(d).map(([t, rows]) => [t, rows.length]));
}

describe('mailverdict store copy', () => {
  for (const backend of backends) {
    it(`lists every table of the ${backend} schema in its copy list or among the runtime tables`, async () => {
      const store = await openTestStore(backend);
      cleanups.push(() => store.close());
      const copied = COPIED_TABLES.map((t) => t.name).sort();
      expect(new Set(copied).size).toBe(COPIED_TABLES.length);
      const kept = [...copied, ...RUNTIME_TABLES].sort();
      expect((await tableNames(store)).filter((t) => !BOOKKEEPING.includes(t)).sort()).toEqual(kept);
    });
  }

  it('refuses a --from directory without a store (exit 2), creating nothing there', async () => {
    const dir = join(tempDir(), 'missing');
    const res = await runCli(['store', 'copy', '--from', dir, '--to', UNREACHABLE_TARGET]);
    expect(res.code).toBe(2);
    expect(res.stderr).toContain('no mailverdict store in');
    expect(existsSync(dir)).toBe(false);
  });

  it('refuses a source that is not at the latest migration (exit 2), before opening the target', async () => {
    const dir = tempDir();
    const old = openDatabase({ dataDir: dir });
    const migrator = new Migrator({ db: old, provider: { getMigrations: async () => migrations } });
    const first = Object.keys(migrations).sort()[0]!;
    expect((await migrator.migrateTo(first)).error).toBeUndefined();
    await old.destroy();

    const res = await runCli(['store', 'copy', '--from', dir, '--to', UNREACHABLE_TARGET]);
    expect(res.code).toBe(2);
    expect(res.stderr).toContain('not at the latest schema');
    expect(res.stderr).toContain(`mailverdict migrate --data-dir`);
  });
});

describe.skipIf(!backends.includes('postgres'))('mailverdict store copy into PostgreSQL', () => {
  let h: JobsHarness;
  let revokedKey: string;

  /** A fresh PostgreSQL schema, and the store opened on it as the tests read it. */
  async function freshTarget(): Promise<{ url: string; db: Kysely<Database> }> {
    const { url } = await createTestSchema();
    const db = openDatabase({ dataDir: h.dir, databaseUrl: url });
    cleanups.push(() => db.destroy());
    return { url, db };
  }
  const copy = (to: string, ...extra: string[]) =>
    runCli(['store', 'copy', '--from', h.dir, '--to', to, ...extra]);
  /** A target the source was copied into (in process: what the CLI runs, without its start-up time). */
  async function copiedTarget(): Promise<{ url: string; db: Kysely<Database> }> {
    const target = await freshTarget();
    const source = openSqliteSource(h.dir)!;
    try {
      await copyStore({ source, target: target.db }, { force: false });
    } finally {
      await source.destroy();
    }
    return target;
  }

  /** A store as a user would have it after a while: see the module comment. */
  beforeAll(async () => {
    // databaseUrl undefined: the source is SQLite even when the API suites run on PostgreSQL.
    h = await createJobsHarness({
      flags: { chunkSize: '10', allowInsecureWebhooks: 'true', databaseUrl: undefined },
    });
    cleanups.push(() => h.close());
    const { db, config } = h.runtime.ctx;
    const receiver = http.createServer((req, res) => req.resume().on('end', () => res.writeHead(204).end()));
    receiver.listen(0, '127.0.0.1');
    await once(receiver, 'listening');
    cleanups.push(() => void receiver.close());
    const hook = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hook`;

    const other = await h.createOtherAccount();
    const spare = await createKey(db, h.clock, { accountId: other.accountId, kind: 'live' });
    await revokeKey(db, h.clock, spare.record.id);
    revokedKey = spare.key;
    const plans = plansFromConfig(config);
    await consumeQuota(db, { accountId: h.accountId, count: 7, now: h.clock.now(), plans });
    await consumeQuota(db, { accountId: other.accountId, count: 2, now: h.clock.now(), plans });
    await webhookSecretFor(db, h.accountId);

    const done = await h.submit(
      h.testKey,
      { emails: fixtureEmails(35), webhook_url: hook, notify_email: true },
      { 'idempotency-key': 'first-batch' },
    );
    expect(done.statusCode).toBe(202);
    expect(await h.drain()).toBe(4);
    const runner = new DeliveryRunner({
      db,
      clock: h.clock,
      config,
      logger: pino({ level: 'silent' }),
      resolveHost: async () => [{ address: '127.0.0.1', family: 4 }],
      notifier: null,
    });
    expect(await runner.runOnce()).toBe(2);
    // The dashboard's (docs/dashboard.md): a member who joined and signed in, a failed sign-in, a
    // key's last use, an uploaded list with its other columns, and its job's counts.
    const invited = await issueInvitation(db, h.clock, {
      accountId: h.accountId,
      email: 'member@example.org',
    });
    const { person, member } = await acceptLink(db, h.clock, {
      token: invited.token,
      password: 'a long password',
      kind: 'invitation',
    });
    await createSession(db, h.clock, config, person.id, member!.id, {
      clientIp: '127.0.0.1',
      userAgent: 'Firefox',
    });
    await recordAudit(db, h.clock, {
      accountId: h.accountId,
      type: 'sign_in',
      actor: { kind: 'member', memberId: member!.id, email: person.email },
      origin: { clientIp: '127.0.0.1', userAgent: 'Firefox' },
    });
    // Two factors for the member: its secret, its recovery codes, a pending sign-in challenge.
    const enrolment = await startEnrolment(db, h.clock, { personId: person.id, email: person.email });
    await confirmEnrolment(db, h.clock, {
      personId: person.id,
      code: totpCode(enrolment.secret, h.clock.now()),
      password: 'a long password',
      failureLimit: 10,
      log: null,
    });
    await issueChallenge(db, h.clock, person.id);
    // A pending change of sign-in address (migration 0019).
    await insertEmailChange(db, {
      token_hash: 'a'.repeat(64),
      person_id: person.id,
      new_email: 'new-address@example.com',
      created_at: h.clock.now().toISOString(),
      expires_at: new Date(h.clock.now().getTime() + DAY).toISOString(),
      used_at: null,
    });
    await addSignInFailure(db, 'a-failed-sign-in', h.clock.now().toISOString());
    await recordKeyUse(db, (await authenticateKey(db, h.liveKey)).keyId, h.clock.now().toISOString());
    // A publishable key and its daily count (api_key_days).
    const widgetKey = await createKey(db, h.clock, {
      accountId: h.accountId,
      kind: 'test',
      publishable: { allowedOrigins: ['https://shop.example'] },
    });
    await countKeyDay(db, widgetKey.record.id, '2026-03-10', 10);
    // The first start's row (migration 0016), as a bootstrap leaves it once delivered.
    await insertBootstrap(db, {
      account_id: h.accountId,
      live_key_id: widgetKey.record.id,
      test_key_id: widgetKey.record.id,
      created_at: h.clock.now().toISOString(),
    });
    const upload = await uploadList(
      { db, clock: h.clock, config, plans, resolveHost: async () => [], usageCache: null },
      {
        accountId: h.accountId,
        name: 'list.csv',
        emailColumn: 0,
        header: true,
        mode: 'test',
        body: Readable.from(['email,name\n', 'ann@valid.example.com,Ann\n']),
        byteLimit: 1 << 20,
      },
    );
    expect(await h.drain()).toBe(1);
    expect(
      (await getJobDetail({ db, clock: h.clock, config }, h.accountId, upload.id)).counts,
    ).not.toBeNull();
    // The list on a schedule, run once a day later and compared with a baseline that differed:
    // the schedule, its kept copy, the run and its changed row.
    await setSchedule({ db, clock: h.clock, config }, h.accountId, upload.id, 1);
    await db.updateTable('list_schedule_rows').set({ statuses: '["undeliverable"]' }).execute();
    h.advance(DAY);
    const tickDeps = { db, clock: h.clock, config, plans, resolveHost: async () => [], usageCache: null };
    expect((await runScheduledLists(tickDeps)).runs).toBe(1);
    expect(await h.drain()).toBe(1);
    expect((await runScheduledLists(tickDeps)).compared).toBe(1);
    // A job still queued: pending chunks without results travel too.
    expect((await h.submit(other.testKey, { emails: fixtureEmails(12) })).statusCode).toBe(202);
    // Delivery outcomes and filters (migrations 0017, 0018).
    await takeOutcomes(
      { db, clock: h.clock, retentionMs: config.outcomeRetentionMs },
      { accountId: h.accountId, source: 'api', events: [{ email: 'anna@example.com', type: 'hard_bounce' }] },
    );
    await createFilter(db, h.clock, {
      accountId: h.accountId,
      action: 'block',
      match: 'domain',
      value: 'example.net',
    });
    // An outcome source with its sealed signing key, and a Mailgun token seen (migration 0020).
    const mailgun = await createOutcomeSource(db, h.clock, config.publicBaseUrl, {
      accountId: h.accountId,
      provider: 'mailgun',
      verificationKey: 'key-3ax6xnjp29jd6fds4gc373sgvjxteol0',
    });
    await recordNonce(
      db,
      { source_id: mailgun.id, nonce: 'token-1', body_hash: 'ab', expires_at: '2099-01-01T00:00:00.000Z' },
      h.clock.now().toISOString(),
    );
    // The verdict log (migration 0021).
    h.runtime.ctx.verdictLog.record(h.accountId, [
      { email: 'anna@example.com', status: 'deliverable', reason: null, score: 95, provider: 'google' },
    ]);
    await h.runtime.ctx.verdictLog.flush();
  });

  it('copies every row of every table, and keys created on SQLite authenticate against PostgreSQL', async () => {
    const source = await dump(h.runtime.ctx.db);
    for (const table of COPIED_TABLES) expect(source[table.name], table.name).not.toHaveLength(0);
    expect(source.accounts!.filter((a) => a.webhook_secret !== null)).toHaveLength(1);

    const target = await freshTarget();
    const res = await copy(target.url, '--json');
    expect(res.stderr).toMatch(/copying \[.*\] \d+\/\d+ rows/);
    expect(res.code).toBe(0);
    const summary = JSON.parse(res.stdout) as { rows: number; tables: Record<TableName, number> };
    expect(summary.tables).toEqual(counts(source));
    expect(summary.rows).toBe(Object.values(source).reduce((n, rows) => n + rows.length, 0));
    expect(await dump(target.db)).toEqual(source);

    expect(await authenticateKey(target.db, h.liveKey)).toMatchObject({
      accountId: h.accountId,
      kind: 'live',
    });
    expect(await authenticateKey(target.db, h.testKey)).toMatchObject({
      accountId: h.accountId,
      kind: 'test',
    });
    await expect(authenticateKey(target.db, revokedKey)).rejects.toMatchObject({ code: 'revoked_api_key' });

    // The webhook secret travels sealed: PostgreSQL processes open it with the data directory's key.
    const withKey = openDatabase({
      dataDir: h.dir,
      databaseUrl: target.url,
      secrets: { key: null, keyFile: join(h.dir, SECRET_KEY_FILE), previousKey: null, previousKeyFile: null },
    });
    cleanups.push(() => withKey.destroy());
    const { id: withSecret } = source.accounts!.find((a) => a.webhook_secret !== null)!;
    expect(await webhookSecretFor(withKey, String(withSecret))).toBe(
      await webhookSecretFor(h.runtime.ctx.db, String(withSecret)),
    );
  });

  it('refuses a target that holds data (exit 2) and, told to with --force, leaves it as it was', async () => {
    const target = await copiedTarget();
    const before = await dump(target.db);
    expect(counts(before)).toEqual(counts(await dump(h.runtime.ctx.db)));

    const refused = await copy(target.url);
    expect(refused.stderr).toContain('already holds data; pass --force');
    expect(refused.code).toBe(2);
    expect(await dump(target.db)).toEqual(before);

    const forced = await copy(target.url, '--force', '--json');
    expect(forced.stderr).not.toContain('mailverdict:');
    expect(forced.code).toBe(0);
    expect(JSON.parse(forced.stdout).tables).toEqual(counts(before));
    expect(await dump(target.db)).toEqual(before);
  });

  it('completes an interrupted copy when run again with --force', async () => {
    const target = await copiedTarget();
    const complete = await dump(target.db);
    // What a crash during job_chunks leaves: the tables before it whole, part of it, nothing after.
    const seqs = complete.job_chunks!.map((c) => c.seq as number);
    await target.db.deleteFrom('job_delivery_attempts').execute();
    await target.db.deleteFrom('job_deliveries').execute();
    await target.db.deleteFrom('idempotency_keys').execute();
    await target.db
      .deleteFrom('job_chunks')
      .where('seq', '>=', Math.max(...seqs) - 1)
      .execute();

    const res = await copy(target.url, '--force', '--no-progress');
    expect(res.stderr).toBe('');
    expect(res.code).toBe(0);
    expect(res.stdout).toMatch(/^copied \d+ rows from .* to PostgreSQL/);
    expect(await dump(target.db)).toEqual(complete);
  });

  it('gives rows changed in the source since an earlier copy their new values when run with --force', async () => {
    const target = await copiedTarget();
    const complete = await dump(target.db);
    // The target as an earlier copy left it, before the source revoked a key and counted usage.
    await target.db.updateTable('api_keys').set({ revoked_at: null }).execute();
    await target.db.updateTable('usage_periods').set({ used: 0 }).execute();
    await expect(authenticateKey(target.db, revokedKey)).resolves.toMatchObject({ kind: 'live' });

    expect((await copy(target.url, '--force', '--no-progress')).code).toBe(0);
    expect(await dump(target.db)).toEqual(complete);
    await expect(authenticateKey(target.db, revokedKey)).rejects.toMatchObject({ code: 'revoked_api_key' });
  });
});
