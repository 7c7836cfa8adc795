/**
 * Migration 0010 (people in several accounts) on every backend, from rows the old schema made:
 * each member becomes one person and one membership with the same id, and what was a member's
 * (password, sessions, links, second factor, recovery codes, challenges) follows the person.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Migrator, sql, type Kysely } from 'kysely';
import { afterEach, describe, expect, it } from 'vitest';
import { storeBackend } from '../../src/store/backend.js';
import { openDatabase, type StoreSettings } from '../../src/store/db.js';
import { migrateToLatest } from '../../src/store/migrate.js';
import { migrations } from '../../src/store/migrations/index.js';
import type { Database } from '../../src/store/schema.js';
import { ManualClock } from '../../src/clock.js';
import { authenticateSession } from '../../src/services/people/sessions.service.js';
import { createTestSchema, testBackends } from '../kit/store-harness.js';

const T = '2026-03-10T12:00:00.000Z';
const LATER = '2026-03-11T12:00:00.000Z';
const clock = new ManualClock('2026-03-10T12:30:00.000Z');
const SESSION_SETTINGS = {
  sessionIdleTimeoutMs: 3_600_000,
  sessionMaxAgeMs: 86_400_000,
  signInRateLimit: 0,
  signInFailureLimit: 0,
};

describe.each(testBackends())('migration 0010 (people) on %s', (backend) => {
  let db: Kysely<Database> | undefined;
  let dir: string | undefined;
  afterEach(async () => {
    await db?.destroy();
    if (dir) rmSync(dir, { recursive: true, force: true });
    db = undefined;
    dir = undefined;
  });

  async function storeAt0009(): Promise<Kysely<Database>> {
    dir = mkdtempSync(join(tmpdir(), 'mailverdict-0010-'));
    const settings: StoreSettings =
      backend === 'sqlite'
        ? { dataDir: dir }
        : { dataDir: dir, databaseUrl: (await createTestSchema()).url, databasePoolSize: 4 };
    db = openDatabase(settings);
    const schema = await storeBackend(db).migrationSchema(db);
    const migrator = new Migrator({
      db,
      provider: { getMigrations: async () => migrations },
      ...(schema === undefined ? {} : { migrationTableSchema: schema }),
    });
    const { error } = await migrator.migrateTo('0009-audit-log');
    if (error !== undefined) throw error instanceof Error ? error : new Error('migrating to 0009 failed');
    return db;
  }

  /** Rows as 0005-0009 made them: two accounts, a joined owner with two factors, a pending invitee. */
  async function oldRows(db: Kysely<Database>): Promise<void> {
    for (const [id, email] of [
      ['acc_a', 'a@example.org'],
      ['acc_b', 'b@example.org'],
    ])
      await sql`insert into accounts (id, email, plan, created_at, updated_at)
        values (${id}, ${email}, 'free', ${T}, ${T})`.execute(db);
    await sql`insert into members (id, account_id, email, role, password_hash, created_at, joined_at) values
      ('mem_ann', 'acc_a', 'ann@example.org', 'owner', 'scrypt$old', ${T}, ${T}),
      ('mem_bob', 'acc_b', 'bob@example.org', 'member', null, ${T}, null)`.execute(db);
    await sql`insert into dashboard_sessions (id, member_id, created_at, last_seen_at, expires_at, user_agent, client_ip)
      values ('s1', 'mem_ann', ${T}, ${T}, ${LATER}, 'Firefox', '127.0.0.1')`.execute(db);
    await sql`insert into member_tokens (token_hash, member_id, kind, created_at, expires_at, used_at, invited_by)
      values ('t_inv', 'mem_bob', 'invitation', ${T}, ${LATER}, null, 'mem_ann'),
             ('t_reset', 'mem_ann', 'password_reset', ${T}, ${LATER}, null, null)`.execute(db);
    await sql`insert into member_two_factor (member_id, secret, created_at, enabled_at, last_step)
      values ('mem_ann', 'JBSWY3DPEHPK3PXP', ${T}, ${T}, 42)`.execute(db);
    await sql`insert into member_recovery_codes (code_hash, member_id, created_at, used_at)
      values ('code1', 'mem_ann', ${T}, null)`.execute(db);
    await sql`insert into sign_in_challenges (id, member_id, created_at, expires_at)
      values ('ch1', 'mem_ann', ${T}, ${LATER})`.execute(db);
  }

  it('makes each member one person and one membership, and moves what is the person’s', async () => {
    const store = await storeAt0009();
    await oldRows(store);
    const outcome = await migrateToLatest(store);
    expect(outcome.applied).toContain('0010-people');

    expect(await store.selectFrom('people').selectAll().orderBy('email').execute()).toEqual([
      {
        id: 'per_ann',
        email: 'ann@example.org',
        password_hash: 'scrypt$old',
        created_at: T,
        operator_since: null,
      },
      { id: 'per_bob', email: 'bob@example.org', password_hash: null, created_at: T, operator_since: null },
    ]);
    expect(await store.selectFrom('members').selectAll().orderBy('id').execute()).toEqual([
      {
        id: 'mem_ann',
        account_id: 'acc_a',
        person_id: 'per_ann',
        role: 'owner',
        created_at: T,
        joined_at: T,
      },
      {
        id: 'mem_bob',
        account_id: 'acc_b',
        person_id: 'per_bob',
        role: 'member',
        created_at: T,
        joined_at: null,
      },
    ]);
    expect(
      await store
        .selectFrom('dashboard_sessions')
        .select(['id', 'person_id', 'member_id', 'user_agent'])
        .execute(),
    ).toEqual([{ id: 's1', person_id: 'per_ann', member_id: 'mem_ann', user_agent: 'Firefox' }]);
    expect(
      await store
        .selectFrom('member_tokens')
        .select(['token_hash', 'person_id', 'member_id', 'kind', 'invited_by'])
        .orderBy('token_hash')
        .execute(),
    ).toEqual([
      {
        token_hash: 't_inv',
        person_id: 'per_bob',
        member_id: 'mem_bob',
        kind: 'invitation',
        invited_by: 'mem_ann',
      },
      {
        token_hash: 't_reset',
        person_id: 'per_ann',
        member_id: null,
        kind: 'password_reset',
        invited_by: null,
      },
    ]);
    expect(await store.selectFrom('member_two_factor').select(['person_id', 'last_step']).execute()).toEqual([
      { person_id: 'per_ann', last_step: 42 },
    ]);
    expect(await store.selectFrom('member_recovery_codes').select('person_id').execute()).toEqual([
      { person_id: 'per_ann' },
    ]);
    expect(await store.selectFrom('sign_in_challenges').select('person_id').execute()).toEqual([
      { person_id: 'per_ann' },
    ]);
  });

  it('lets a person join a second account, once per account, and keeps the foreign keys working', async () => {
    const store = await storeAt0009();
    await oldRows(store);
    await migrateToLatest(store);
    await store
      .insertInto('members')
      .values({
        id: 'mem_ann_b',
        account_id: 'acc_b',
        person_id: 'per_ann',
        role: 'member',
        created_at: T,
        joined_at: T,
      })
      .execute();
    await expect(
      store
        .insertInto('members')
        .values({
          id: 'mem_ann_b2',
          account_id: 'acc_b',
          person_id: 'per_ann',
          role: 'member',
          created_at: T,
          joined_at: T,
        })
        .execute(),
    ).rejects.toThrow();
    await expect(
      store
        .insertInto('people')
        .values({
          id: 'per_dup',
          email: 'ann@example.org',
          password_hash: null,
          created_at: T,
          operator_since: null,
        })
        .execute(),
    ).rejects.toThrow();
    // The migrated session still opens, in its account; removing that membership moves it.
    const secretless = await store
      .selectFrom('dashboard_sessions')
      .select('member_id')
      .executeTakeFirstOrThrow();
    expect(secretless.member_id).toBe('mem_ann');
    await store.deleteFrom('members').where('id', '=', 'mem_ann').execute();
    expect(
      (await store.selectFrom('dashboard_sessions').select('member_id').executeTakeFirstOrThrow()).member_id,
    ).toBeNull();
    expect(
      await store
        .selectFrom('member_tokens')
        .select('token_hash')
        .where('invited_by', '=', 'mem_ann')
        .execute(),
    ).toEqual([]);
    // The person goes with everything that is theirs.
    await store.deleteFrom('people').where('id', '=', 'per_ann').execute();
    for (const table of [
      'dashboard_sessions',
      'member_two_factor',
      'member_recovery_codes',
      'sign_in_challenges',
    ] as const)
      expect(await store.selectFrom(table).selectAll().execute()).toEqual([]);
    expect(await store.selectFrom('members').select('id').execute()).toEqual([{ id: 'mem_bob' }]);
  });

  it('opens a session made before the migration, in its account', async () => {
    const store = await storeAt0009();
    await oldRows(store);
    await migrateToLatest(store);
    // The stored id is the SHA-256 of the cookie's secret; give the migrated row a known one.
    const { createHash } = await import('node:crypto');
    await store
      .updateTable('dashboard_sessions')
      .set({ id: createHash('sha256').update('the-secret').digest('hex') })
      .where('id', '=', 's1')
      .execute();
    const session = await authenticateSession(store, clock, SESSION_SETTINGS, 'the-secret');
    expect(session).toMatchObject({
      personId: 'per_ann',
      memberId: 'mem_ann',
      accountId: 'acc_a',
      role: 'owner',
      email: 'ann@example.org',
      twoFactorEnabled: true,
      operator: false,
    });
  });
});
