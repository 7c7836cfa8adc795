/**
 * People in several accounts (issue 16; docs/dashboard.md, "People and accounts"). A person (one
 * address, one password, one second factor) can belong to several accounts: `people` holds what
 * is a person's, `members` becomes the membership (account, person, role), unique per (account,
 * person). Sessions, challenges, second factors, recovery codes and password-reset links move to
 * the person; an invitation stays a membership's. A session keeps its current membership
 * (`member_id`, null once that membership is removed). `operator_since` marks the operators.
 *
 * SQLite cannot drop a UNIQUE column or change a foreign key, so every table that names a member
 * is rebuilt: created anew as `<name>_v10`, filled from the old one, the old one dropped
 * (children before parents, so no cascade fires) and the new one renamed. Each old member becomes
 * one person (`per_` and the member id's random part) and one membership with the same id, so
 * sessions, links and audit entries keep pointing at the same rows. Portable DDL and SQL: runs on
 * SQLite (foreign keys on; SQLite >= 3.26 renames the references with the table) and PostgreSQL.
 */
import { sql, type Kysely, type Migration } from 'kysely';

/** The person id of a member row migrated from 0005-0009: `mem_X` → `per_X`. */
const PERSON_OF_MEMBER = sql`'per_' || substr(id, 5)`;

export const peopleMigration: Migration = {
  async up(db: Kysely<unknown>): Promise<void> {
    await db.schema
      .createTable('people')
      .addColumn('id', 'text', (c) => c.primaryKey())
      // Lower-cased: one address, one person, in any number of accounts.
      .addColumn('email', 'text', (c) => c.notNull().unique())
      // `scrypt$…`; null until the person first chooses one (an invitation's page, a reset).
      .addColumn('password_hash', 'text')
      .addColumn('created_at', 'text', (c) => c.notNull())
      // When the person became an operator (`mailverdict operators add`); null: not one.
      .addColumn('operator_since', 'text')
      .execute();
    await sql`insert into people (id, email, password_hash, created_at, operator_since)
      select ${PERSON_OF_MEMBER}, email, password_hash, created_at, null from members`.execute(db);

    await db.schema
      .createTable('members_v10')
      .addColumn('id', 'text', (c) => c.primaryKey())
      .addColumn('account_id', 'text', (c) => c.notNull().references('accounts.id').onDelete('cascade'))
      .addColumn('person_id', 'text', (c) => c.notNull().references('people.id').onDelete('cascade'))
      .addColumn('role', 'text', (c) => c.notNull().check(sql`role in ('owner', 'member')`))
      .addColumn('created_at', 'text', (c) => c.notNull())
      // Null while the invitation is pending: a membership counts once it is accepted.
      .addColumn('joined_at', 'text')
      .addUniqueConstraint('members_v10_account_person_uq', ['account_id', 'person_id'])
      .execute();
    await sql`insert into members_v10 (id, account_id, person_id, role, created_at, joined_at)
      select id, account_id, ${PERSON_OF_MEMBER}, role, created_at, joined_at from members`.execute(db);

    await db.schema
      .createTable('dashboard_sessions_v10')
      .addColumn('id', 'text', (c) => c.primaryKey())
      .addColumn('person_id', 'text', (c) => c.notNull().references('people.id').onDelete('cascade'))
      // The current membership; null once it is removed (the next request moves to another).
      .addColumn('member_id', 'text', (c) => c.references('members_v10.id').onDelete('set null'))
      .addColumn('created_at', 'text', (c) => c.notNull())
      .addColumn('last_seen_at', 'text', (c) => c.notNull())
      .addColumn('expires_at', 'text', (c) => c.notNull())
      .addColumn('user_agent', 'text')
      .addColumn('client_ip', 'text')
      .execute();
    await sql`insert into dashboard_sessions_v10
      (id, person_id, member_id, created_at, last_seen_at, expires_at, user_agent, client_ip)
      select id, 'per_' || substr(member_id, 5), member_id, created_at, last_seen_at, expires_at,
        user_agent, client_ip from dashboard_sessions`.execute(db);

    await db.schema
      .createTable('member_tokens_v10')
      .addColumn('token_hash', 'text', (c) => c.primaryKey())
      .addColumn('person_id', 'text', (c) => c.notNull().references('people.id').onDelete('cascade'))
      // The membership an invitation is for; null for a password reset (the person's).
      .addColumn('member_id', 'text', (c) => c.references('members_v10.id').onDelete('cascade'))
      .addColumn('kind', 'text', (c) => c.notNull().check(sql`kind in ('invitation', 'password_reset')`))
      .addColumn('created_at', 'text', (c) => c.notNull())
      .addColumn('expires_at', 'text', (c) => c.notNull())
      .addColumn('used_at', 'text')
      .addColumn('invited_by', 'text', (c) => c.references('members_v10.id').onDelete('cascade'))
      .addCheckConstraint(
        'member_tokens_v10_kind_member_ck',
        sql`(kind = 'invitation') = (member_id is not null)`,
      )
      .execute();
    await sql`insert into member_tokens_v10
      (token_hash, person_id, member_id, kind, created_at, expires_at, used_at, invited_by)
      select token_hash, 'per_' || substr(member_id, 5),
        case when kind = 'invitation' then member_id else null end,
        kind, created_at, expires_at, used_at, invited_by from member_tokens`.execute(db);

    await db.schema
      .createTable('member_two_factor_v10')
      .addColumn('person_id', 'text', (c) => c.primaryKey().references('people.id').onDelete('cascade'))
      .addColumn('secret', 'text', (c) => c.notNull())
      .addColumn('created_at', 'text', (c) => c.notNull())
      .addColumn('enabled_at', 'text')
      .addColumn('last_step', 'integer')
      .execute();
    await sql`insert into member_two_factor_v10 (person_id, secret, created_at, enabled_at, last_step)
      select 'per_' || substr(member_id, 5), secret, created_at, enabled_at, last_step
      from member_two_factor`.execute(db);

    await db.schema
      .createTable('member_recovery_codes_v10')
      .addColumn('code_hash', 'text', (c) => c.primaryKey())
      .addColumn('person_id', 'text', (c) => c.notNull().references('people.id').onDelete('cascade'))
      .addColumn('created_at', 'text', (c) => c.notNull())
      .addColumn('used_at', 'text')
      .execute();
    await sql`insert into member_recovery_codes_v10 (code_hash, person_id, created_at, used_at)
      select code_hash, 'per_' || substr(member_id, 5), created_at, used_at
      from member_recovery_codes`.execute(db);

    await db.schema
      .createTable('sign_in_challenges_v10')
      .addColumn('id', 'text', (c) => c.primaryKey())
      .addColumn('person_id', 'text', (c) => c.notNull().references('people.id').onDelete('cascade'))
      .addColumn('created_at', 'text', (c) => c.notNull())
      .addColumn('expires_at', 'text', (c) => c.notNull())
      .execute();
    await sql`insert into sign_in_challenges_v10 (id, person_id, created_at, expires_at)
      select id, 'per_' || substr(member_id, 5), created_at, expires_at
      from sign_in_challenges`.execute(db);

    // Children first: nothing refers to an old table when it goes, so no cascade fires.
    for (const table of [
      'sign_in_challenges',
      'member_recovery_codes',
      'member_two_factor',
      'member_tokens',
      'dashboard_sessions',
      'members',
    ])
      await db.schema.dropTable(table).execute();
    for (const table of [
      'members',
      'dashboard_sessions',
      'member_tokens',
      'member_two_factor',
      'member_recovery_codes',
      'sign_in_challenges',
    ])
      await db.schema.alterTable(`${table}_v10`).renameTo(table).execute();

    await db.schema.createIndex('members_account_idx').on('members').columns(['account_id']).execute();
    await db.schema.createIndex('members_person_idx').on('members').columns(['person_id']).execute();
    await db.schema
      .createIndex('dashboard_sessions_person_idx')
      .on('dashboard_sessions')
      .columns(['person_id'])
      .execute();
    await db.schema
      .createIndex('dashboard_sessions_member_idx')
      .on('dashboard_sessions')
      .columns(['member_id'])
      .execute();
    await db.schema
      .createIndex('dashboard_sessions_expire_idx')
      .on('dashboard_sessions')
      .columns(['expires_at'])
      .execute();
    await db.schema
      .createIndex('member_tokens_person_idx')
      .on('member_tokens')
      .columns(['person_id', 'kind'])
      .execute();
    await db.schema
      .createIndex('member_tokens_member_idx')
      .on('member_tokens')
      .columns(['member_id', 'kind'])
      .execute();
    await db.schema
      .createIndex('member_recovery_codes_person_idx')
      .on('member_recovery_codes')
      .columns(['person_id'])
      .execute();
    await db.schema
      .createIndex('sign_in_challenges_expire_idx')
      .on('sign_in_challenges')
      .columns(['expires_at'])
      .execute();
  },

  // One way: a person in two accounts has no place in the old schema.
  async down(): Promise<void> {
    throw new Error('migration 0010 (people) cannot be undone: restore the backup taken before it');
  },
};
