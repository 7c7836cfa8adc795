/**
 * The security log on every backend: entries listed newest first by cursor, filtered by type and
 * member, kept after the member who acted is removed, and deleted only by the retention sweep.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { ManualClock, DAY, MINUTE } from '../../src/clock.js';
import { sweepOnce } from '../../src/jobs/sweep.js';
import { createAccount } from '../../src/services/accounts/accounts.service.js';
import {
  auditCsv,
  listAudit,
  recordAudit,
  type AuditActor,
} from '../../src/services/accounts/audit.service.js';
import { acceptLink, issueInvitation } from '../../src/services/people/members.service.js';
import { endOwnSession, listOwnSessions } from '../../src/services/people/session-list.service.js';
import { authenticateSession, createSession } from '../../src/services/people/sessions.service.js';
import { openTestStore, testBackends, type TestStore } from '../kit/store-harness.js';

const SESSION_SETTINGS = {
  sessionIdleTimeoutMs: 3_600_000,
  sessionMaxAgeMs: 86_400_000,
  signInRateLimit: 0,
  signInFailureLimit: 0,
};

describe.each(testBackends())('the security log on %s', (backend) => {
  let store: TestStore | undefined;
  afterEach(async () => {
    await store?.close();
    store = undefined;
  });

  const owner: AuditActor = { kind: 'member', memberId: 'mem_owner', email: 'owner@example.org' };

  async function accountWithEntries(clock: ManualClock, n: number): Promise<string> {
    const account = await createAccount(store!.db, clock, { email: `log-${n}@example.org` });
    for (let i = 0; i < n; i++) {
      await recordAudit(store!.db, clock, {
        accountId: account.id,
        type: i % 2 === 0 ? 'key_created' : 'sign_in',
        actor: i % 3 === 0 ? { kind: 'operator' } : owner,
        origin: { clientIp: '127.0.0.2', userAgent: `agent ${i}\r\n${'x'.repeat(400)}` },
        details: { key_id: `key_${i}` },
      });
      // Every other entry shares its millisecond with the one before: the cursor's id breaks ties.
      if (i % 2 === 1) clock.advance(MINUTE);
    }
    return account.id;
  }

  it('pages through every entry newest first, each once, with ties in time broken by id', async () => {
    store = await openTestStore(backend);
    const clock = new ManualClock('2026-03-10T12:00:00.000Z');
    const accountId = await accountWithEntries(clock, 11);
    const seen: string[] = [];
    let before: string | undefined;
    let pages = 0;
    do {
      const page = await listAudit(store.db, accountId, { limit: 4, ...(before ? { before } : {}) });
      seen.push(...page.entries.map((e) => e.details.key_id as string));
      before = page.next_before ?? undefined;
      pages++;
    } while (before !== undefined);
    expect(pages).toBe(3);
    expect(new Set(seen).size).toBe(11);
    const all = await listAudit(store.db, accountId, { limit: 100 });
    const times = all.entries.map((e) => e.at);
    expect([...times].sort().reverse()).toEqual(times);
    expect(all.entries[0]!.user_agent).toHaveLength(200);
    expect(all.entries[0]!.user_agent).not.toMatch(/[\r\n]/);
  });

  it('filters by event type and by the member who acted', async () => {
    store = await openTestStore(backend);
    const clock = new ManualClock('2026-03-10T12:00:00.000Z');
    const accountId = await accountWithEntries(clock, 6);
    const keys = await listAudit(store.db, accountId, { type: 'key_created' });
    expect(keys.entries.map((e) => e.type)).toEqual(['key_created', 'key_created', 'key_created']);
    const byOwner = await listAudit(store.db, accountId, { member: 'mem_owner' });
    expect(byOwner.entries).toHaveLength(4);
    expect(byOwner.entries.every((e) => e.actor.email === 'owner@example.org')).toBe(true);
    await expect(listAudit(store.db, accountId, { type: 'drop_tables' })).rejects.toMatchObject({
      code: 'invalid_request',
    });
    await expect(listAudit(store.db, accountId, { before: 'not-a-cursor' })).rejects.toMatchObject({
      code: 'invalid_request',
    });
  });

  it("shows one account's entries only", async () => {
    store = await openTestStore(backend);
    const clock = new ManualClock('2026-03-10T12:00:00.000Z');
    const a = await accountWithEntries(clock, 3);
    const b = await accountWithEntries(clock, 2);
    expect((await listAudit(store.db, a, {})).entries).toHaveLength(3);
    expect((await listAudit(store.db, b, {})).entries).toHaveLength(2);
  });

  it('deletes entries older than the retention in the sweep, and only those', async () => {
    store = await openTestStore(backend);
    const clock = new ManualClock('2026-03-10T12:00:00.000Z');
    const accountId = await accountWithEntries(clock, 2);
    clock.advance(10 * DAY);
    await recordAudit(store.db, clock, { accountId, type: 'password_changed', actor: owner });
    clock.advance(DAY);
    const report = await sweepOnce(store.db, clock, 5 * DAY);
    expect(report.auditEntries).toBe(2);
    const left = await listAudit(store.db, accountId, {});
    expect(left.entries.map((e) => e.type)).toEqual(['password_changed']);
  });

  it('writes the CSV with formula-like cells neutralised, for the owner only', async () => {
    store = await openTestStore(backend);
    const clock = new ManualClock('2026-03-10T12:00:00.000Z');
    const account = await createAccount(store.db, clock, { email: 'csv@example.org' });
    await recordAudit(store.db, clock, {
      accountId: account.id,
      type: 'sign_in',
      actor: owner,
      origin: { clientIp: '127.0.0.3', userAgent: '=HYPERLINK("http://x")' },
    });
    const csv = await auditCsv(store.db, { accountId: account.id, role: 'owner' }, {});
    const lines = csv.trim().split('\r\n');
    expect(lines[0]).toBe('at,type,actor,member_id,email,client_ip,user_agent,details');
    expect(lines[1]).toContain(`"'=HYPERLINK(""http://x"")"`);
    await expect(auditCsv(store.db, { accountId: account.id, role: 'member' }, {})).rejects.toMatchObject({
      code: 'insufficient_permissions',
    });
  });

  it("keeps a session's browser and address, lists a member's own, and ends only the member's", async () => {
    store = await openTestStore(backend);
    const clock = new ManualClock('2026-03-10T12:00:00.000Z');
    const account = await createAccount(store.db, clock, { email: 'sessions@example.org' });
    const members = [];
    for (const email of ['a@example.org', 'b@example.org']) {
      const issued = await issueInvitation(store.db, clock, { accountId: account.id, email });
      members.push(
        await acceptLink(store.db, clock, {
          token: issued.token,
          password: 'a long password 42',
          kind: 'invitation',
        }),
      );
    }
    const [a, b] = members as [(typeof members)[0], (typeof members)[0]];
    const firefox = {
      clientIp: '127.0.0.5',
      userAgent: 'Mozilla/5.0 (X11; Linux x86_64; rv:120.0) Gecko/20100101 Firefox/120.0',
    };
    const mine = await createSession(store.db, clock, SESSION_SETTINGS, a.person.id, a.member!.id, firefox);
    await createSession(store.db, clock, SESSION_SETTINGS, a.person.id, a.member!.id);
    const theirs = await createSession(store.db, clock, SESSION_SETTINGS, b.person.id, b.member!.id);
    const me = await authenticateSession(store.db, clock, SESSION_SETTINGS, mine.secret);
    const listed = await listOwnSessions(store.db, clock, me);
    expect(listed).toHaveLength(2);
    expect(listed.find((s) => s.current)).toMatchObject({
      browser: 'Firefox 120',
      os: 'Linux',
      client_ip: '127.0.0.5',
    });
    const them = await authenticateSession(store.db, clock, SESSION_SETTINGS, theirs.secret);
    const theirId = (await listOwnSessions(store.db, clock, them))[0]!.id;
    await expect(endOwnSession(store.db, clock, me, theirId, firefox)).rejects.toMatchObject({
      code: 'not_found',
    });
    const other = listed.find((s) => !s.current)!;
    await endOwnSession(store.db, clock, me, other.id, firefox);
    expect(await listOwnSessions(store.db, clock, me)).toHaveLength(1);
    expect(await listOwnSessions(store.db, clock, them)).toHaveLength(1);
    expect((await listAudit(store.db, account.id, { type: 'session_ended' })).entries).toHaveLength(1);
  });
});
