/**
 * `mailverdict members reset-2fa --email E`: the operator clears a member's second factor (a lost
 * phone). Before it, the password alone opens no session; after it, it does, and the member's
 * sessions have ended. The command logs the member's id at info level, never the address.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { systemClock } from '../../src/clock.js';
import { loadConfig } from '../../src/config.js';
import { buildHttpApp, createRuntime } from '../../src/runtime.js';
import { acceptLink, issueInvitation } from '../../src/services/people/members.service.js';
import { createSession } from '../../src/services/people/sessions.service.js';
import { confirmEnrolment, startEnrolment, totpCode } from '../../src/services/people/two-factor.service.js';
import { runInProcess } from './in-process.js';

const SLOW = { timeout: 60_000 };
const PASSWORD = 'a long password';

describe('mailverdict members reset-2fa', SLOW, () => {
  let dir: string;
  let accountId: string;

  async function withRuntime<T>(fn: (runtime: Awaited<ReturnType<typeof createRuntime>>) => Promise<T>) {
    const runtime = await createRuntime(loadConfig({ dataDir: dir }, {}), {
      logger: pino({ level: 'silent' }),
    });
    try {
      return await fn(runtime);
    } finally {
      await runtime.close();
    }
  }

  async function signInStatus(): Promise<number> {
    return withRuntime(async (runtime) => {
      const app = buildHttpApp(runtime.ctx);
      try {
        const res = await app.inject({
          method: 'POST',
          url: '/dashboard/api/session',
          headers: { 'content-type': 'application/json' },
          payload: JSON.stringify({ email: 'ann@example.org', password: PASSWORD }),
        });
        return res.statusCode;
      } finally {
        await app.close();
      }
    });
  }

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'mailverdict-reset-2fa-'));
    accountId = JSON.parse(
      await runInProcess(['accounts', 'create', '--email', 'ops@example.org', '--data-dir', dir, '--json']),
    ).id;
  });
  afterAll(() => {
    rmSync(dir, { recursive: true, force: true });
  });

  it('clears the second factor and ends the sessions, logging the person id only', async () => {
    const { memberId, personId } = await withRuntime(async ({ ctx: { db } }) => {
      const issued = await issueInvitation(db, systemClock, { accountId, email: 'ann@example.org' });
      const { person, member } = await acceptLink(db, systemClock, {
        token: issued.token,
        password: PASSWORD,
        kind: 'invitation',
      });
      const { secret } = await startEnrolment(db, systemClock, { personId: person.id, email: person.email });
      await confirmEnrolment(db, systemClock, {
        personId: person.id,
        code: totpCode(secret, new Date()),
        password: PASSWORD,
        failureLimit: 0,
        log: null,
      });
      await createSession(db, systemClock, loadConfig({ dataDir: dir }, {}), person.id, member!.id);
      return { memberId: member!.id, personId: person.id };
    });
    expect(await signInStatus()).toBe(202);

    const stderr = vi.spyOn(process.stderr, 'write').mockImplementation(() => true);
    let out: string;
    let logged: string;
    try {
      out = await runInProcess([
        'members',
        'reset-2fa',
        '--email',
        'Ann@Example.org',
        '--data-dir',
        dir,
        '--json',
      ]);
    } finally {
      logged = stderr.mock.calls.map((c) => String(c[0])).join('');
      stderr.mockRestore();
    }
    expect(JSON.parse(out)).toMatchObject({
      person: { id: personId, email: 'ann@example.org' },
      had_two_factor: true,
    });
    expect(logged).toContain(personId);
    expect(logged).toContain('second factor reset by the operator');
    expect(logged).not.toContain('ann@example.org');

    await withRuntime(async ({ ctx: { db } }) => {
      expect(
        await db.selectFrom('dashboard_sessions').selectAll().where('person_id', '=', personId).execute(),
      ).toEqual([]);
      expect(await db.selectFrom('member_recovery_codes').selectAll().execute()).toEqual([]);
    });
    expect(await signInStatus()).toBe(200);
    // The operator's reset is in the account's security log.
    const audit = JSON.parse(
      await runInProcess([
        'audit',
        '--account',
        accountId,
        '--type',
        'two_factor_reset',
        '--data-dir',
        dir,
        '--json',
      ]),
    ) as { entries: { type: string; actor: string; details: Record<string, unknown> }[] };
    expect(audit.entries).toHaveLength(1);
    expect(audit.entries[0]).toMatchObject({ type: 'two_factor_reset', details: { member_id: memberId } });
  });

  it('refuses an address that is no member', async () => {
    await expect(
      runInProcess(['members', 'reset-2fa', '--email', 'nobody@example.org', '--data-dir', dir]),
    ).rejects.toMatchObject({ code: 'not_found' });
  });
});
