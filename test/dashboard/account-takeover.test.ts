/**
 * The account lifecycle as an attacker would turn it (issue 16, defects 1 to 3): invitation links
 * that outlive their purpose, locking the owner out from elsewhere, a reset link spoiled by another
 * request, and unauthenticated requests that burn the password hash's CPU. The lockout and flood
 * cases run against a listening server, from several loopback client addresses.
 */
import { request as httpRequest } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import {
  HASH_CONCURRENCY,
  HASH_QUEUE_LIMIT,
  hashPassword,
  setPasswordHashCost,
  verifyPassword,
} from '../../src/services/people/passwords.js';
import { signIn, MAX_SIGN_IN_DELAY_MS } from '../../src/services/people/sessions.service.js';
import { RESET_MAILS_PER_HOUR } from '../../src/services/people/members.service.js';
import { isDeviceOf, rotateDeviceToken } from '../../src/services/people/sign-in-device.js';
import { setPersonPassword } from '../../src/store/person.store.js';
import { insertMemberToken } from '../../src/store/member.store.js';
import { hashToken } from '../../src/services/people/members.service.js';
import type { Invitation, SessionView } from '../../src/dashboard/contract.js';
import { startMailSink, type MailSink } from '../kit/mail-sink.js';
import { waitFor } from '../kit/wait-for.js';
import { createDashboardHarness, errorCode, PASSWORD, type DashboardHarness } from '../kit/dashboard-kit.js';

/** Each test hashes passwords with scrypt (100-200 ms idle, seconds on a loaded 2-core machine). */
const SLOW = { timeout: 90_000 };

let h: DashboardHarness | undefined;
let sink: MailSink | undefined;
afterEach(async () => {
  await h?.close();
  await sink?.close();
  h = undefined;
  sink = undefined;
});

const tokenOf = (link: string): string => link.split('#')[1]!;
const linksIn = (mail: MailSink): string[] =>
  mail.messages.map((m) => /#([A-Za-z0-9_-]{43})/.exec(m.text ?? '')![1]!);

describe('invitations cannot be turned', SLOW, () => {
  it('lets only the owner invite: a member is refused with 403 insufficient_permissions', async () => {
    h = await createDashboardHarness();
    await h.addMember('mallory@example.org');
    const mallory = h.browser();
    await mallory.signIn('mallory@example.org');
    const res = await mallory.post('members', { email: 'friend@example.org' });
    expect(res.statusCode).toBe(403);
    expect(errorCode(res)).toBe('insufficient_permissions');
  });

  it('gives no new link for a pending invitation, and the link made first keeps working', async () => {
    h = await createDashboardHarness();
    const { browser: owner } = await h.signedIn();
    const first = (await owner.post('members', { email: 'new@example.org' })).json<Invitation>();
    expect(first.link).not.toBeNull();
    const again = await owner.post('members', { email: 'new@example.org' });
    expect(again.statusCode).toBe(201);
    expect(again.json<Invitation>()).toMatchObject({ link: null, expires_at: first.expires_at });
    const accepted = await h.browser().post('invitations/accept', {
      token: tokenOf(first.link!),
      password: 'a good password',
    });
    expect(accepted.statusCode).toBe(200);
  });

  it('e-mails a pending invitation again to the person only, when a relay is configured', async () => {
    sink = await startMailSink();
    h = await createDashboardHarness({ flags: { smtpRelayUrl: sink.url } });
    const { browser: owner } = await h.signedIn();
    await owner.post('members', { email: 'new@example.org' });
    const again = (await owner.post('members', { email: 'new@example.org' })).json<Invitation>();
    expect(again).toMatchObject({ link: null, emailed: true });
    expect(sink.messages.map((m) => m.to)).toEqual([['new@example.org'], ['new@example.org']]);
    // Both links work until one is used; using one ends the other.
    const [a, b] = linksIn(sink);
    expect(
      (await h.browser().post('invitations/accept', { token: b, password: 'a good password' })).statusCode,
    ).toBe(200);
    expect(
      (await h.browser().post('invitations/accept', { token: a, password: 'another password' })).statusCode,
    ).toBe(404);
  });

  it('never lets an invitation set the password of a person who has one (set by a reset)', async () => {
    sink = await startMailSink();
    h = await createDashboardHarness({ flags: { smtpRelayUrl: sink.url } });
    const { browser: owner } = await h.signedIn();
    const invitation = (await owner.post('members', { email: 'ann@example.org' })).json<Invitation>();
    expect((await h.browser().post('password-resets', { email: 'ann@example.org' })).statusCode).toBe(202);
    await waitFor('the reset e-mail', async () => (sink!.messages.length === 2 ? true : undefined), 10_000);
    const reset = linksIn(sink)[1]!;
    const ann = h.browser();
    expect(
      (await ann.post('password-resets/accept', { token: reset, password: 'ann chose this' })).statusCode,
    ).toBe(200);
    const late = await h.browser().post('invitations/accept', {
      token: tokenOf(invitation.link!),
      password: 'the attacker chose',
    });
    expect(late.statusCode).toBe(401);
    expect(errorCode(late)).toBe('unauthenticated');
    // The reset joined no account; Ann, signed in, accepts the invitation herself.
    expect((await ann.get('session')).json<SessionView>().account).toBeNull();
    const signedIn = h.browser();
    await signedIn.signIn('ann@example.org', 'ann chose this');
    const joined = await signedIn.post('invitations/join', { token: tokenOf(invitation.link!) });
    expect(joined.statusCode).toBe(200);
    expect(joined.json<SessionView>().account!.id).toBe(h.accountId);
  });

  it('revokes every invitation a member made when the member is removed', async () => {
    h = await createDashboardHarness();
    const { browser: owner } = await h.signedIn();
    const malloryId = await h.addMember('mallory@example.org');
    // An invitation Mallory made while members could still invite (before this fix).
    const token = 'm'.repeat(43);
    const { db } = h.runtime.ctx;
    const second = (await owner.post('members', { email: 'mallory.second@example.org' })).json<Invitation>();
    await insertMemberToken(db, {
      token_hash: hashToken(token),
      person_id: (
        await db
          .selectFrom('members')
          .select('person_id')
          .where('id', '=', second.member.id)
          .executeTakeFirstOrThrow()
      ).person_id,
      member_id: second.member.id,
      kind: 'invitation',
      created_at: h.clock.now().toISOString(),
      expires_at: second.expires_at,
      invited_by: malloryId,
    });
    expect((await owner.request('DELETE', `members/${malloryId}`)).statusCode).toBe(204);
    const res = await h.browser().post('invitations/accept', { token, password: 'mallory is back' });
    expect(res.statusCode).toBe(404);
    // The owner's own link for that address is untouched.
    expect(
      (
        await h
          .browser()
          .post('invitations/accept', { token: tokenOf(second.link!), password: 'a good password' })
      ).statusCode,
    ).toBe(200);
  });
});

describe('reset links cannot be spoiled or flooded', SLOW, () => {
  it('keeps an e-mailed reset link working when another reset is asked for', async () => {
    sink = await startMailSink();
    h = await createDashboardHarness({ flags: { smtpRelayUrl: sink.url, signInRateLimit: '0' } });
    await h.addMember('ann@example.org');
    await h.browser().post('password-resets', { email: 'ann@example.org' });
    await waitFor(
      'the first reset e-mail',
      async () => (sink!.messages.length === 1 ? true : undefined),
      10_000,
    );
    await h.browser().post('password-resets', { email: 'ann@example.org' });
    await waitFor(
      'the second reset e-mail',
      async () => (sink!.messages.length === 2 ? true : undefined),
      10_000,
    );
    const [first] = linksIn(sink);
    const res = await h
      .browser()
      .post('password-resets/accept', { token: first, password: 'ann chose this' });
    expect(res.statusCode).toBe(200);
  });

  it(`sends one address at most ${RESET_MAILS_PER_HOUR} reset e-mails an hour, however many ask`, async () => {
    sink = await startMailSink();
    h = await createDashboardHarness({ flags: { smtpRelayUrl: sink.url, signInRateLimit: '0' } });
    await h.addMember('ann@example.org');
    for (let i = 0; i < RESET_MAILS_PER_HOUR + 3; i++)
      expect((await h.browser().post('password-resets', { email: 'ann@example.org' })).statusCode).toBe(202);
    await waitFor(
      'the reset e-mails',
      async () => (sink!.messages.length === RESET_MAILS_PER_HOUR ? true : undefined),
      10_000,
    );
    // The answers are sent before the e-mail; give the refused ones the time to (not) arrive.
    await h.browser().post('password-resets', { email: 'ann@example.org' });
    await new Promise((r) => setTimeout(r, 300));
    expect(sink.messages).toHaveLength(RESET_MAILS_PER_HOUR);
    h.manualClock.advance(60 * 60 * 1000);
    await h.browser().post('password-resets', { email: 'ann@example.org' });
    await waitFor(
      'the next hour’s e-mail',
      async () => (sink!.messages.length === RESET_MAILS_PER_HOUR + 1 ? true : undefined),
      10_000,
    );
  });
});

/** A request to the listening server from the client address `from`. */
function send(
  port: number,
  from: string,
  origin: string,
  path: string,
  body: unknown,
): Promise<{ status: number; body: string; headers: Record<string, unknown> }> {
  return new Promise((resolve, reject) => {
    const payload = JSON.stringify(body);
    const req = httpRequest(
      {
        host: '127.0.0.1',
        port,
        localAddress: from,
        method: 'POST',
        path: `/dashboard/api/${path}`,
        headers: {
          origin,
          'sec-fetch-site': 'same-origin',
          'content-type': 'application/json',
          'content-length': Buffer.byteLength(payload),
        },
      },
      (res) => {
        let text = '';
        res.setEncoding('utf8').on('data', (c: string) => (text += c));
        res.on('end', () => resolve({ status: res.statusCode!, body: text, headers: res.headers }));
      },
    );
    req.on('error', reject);
    req.end(payload);
  });
}

async function listening(flags: Record<string, string>): Promise<{ d: DashboardHarness; port: number }> {
  const d = await createDashboardHarness({ flags });
  h = d;
  await d.app.listen({ host: '127.0.0.1', port: 0 });
  return { d, port: (d.app.server.address() as AddressInfo).port };
}

describe('nobody can lock a person out from elsewhere', SLOW, () => {
  it('refuses only the (address, client) pair that failed; the owner signs in from another address', async () => {
    // A limit of SIGN_IN_CHALLENGE_AFTER: the pair meets its limit before any proof of work
    // (that is test/dashboard/sign-in-challenge.test.ts).
    const { d, port } = await listening({ signInRateLimit: '0', signInFailureLimit: '3' });
    await d.addMember('owner@example.org', { role: 'owner' });
    const attempt = (from: string, password: string) =>
      send(port, from, d.origin, 'session', { email: 'owner@example.org', password });
    for (let i = 0; i < 3; i++) expect((await attempt('127.0.0.2', 'a wrong guess')).status).toBe(401);
    expect((await attempt('127.0.0.2', PASSWORD)).status).toBe(429);
    expect((await attempt('127.0.0.3', PASSWORD)).status).toBe(200);
  });

  it('counts an IPv6 client by its /64: a new address of the same /64 is the same pair', async () => {
    h = await createDashboardHarness({ flags: { signInRateLimit: '0', signInFailureLimit: '3' } });
    await h.signedIn();
    const deps = { db: h.runtime.ctx.db, clock: h.clock, settings: h.runtime.ctx.config };
    for (let i = 1; i <= 3; i++)
      await expect(
        signIn(deps, { email: 'owner@example.org', password: 'wrong', clientIp: `2001:db8:7:7::${i}` }),
      ).rejects.toMatchObject({ code: 'invalid_credentials' });
    // The next address of that /64 gets no fresh budget; another /64 still signs in.
    await expect(
      signIn(deps, { email: 'owner@example.org', password: PASSWORD, clientIp: '2001:db8:7:7:abcd::1' }),
    ).rejects.toMatchObject({ code: 'rate_limit_exceeded' });
    const ok = await signIn(deps, {
      email: 'owner@example.org',
      password: PASSWORD,
      clientIp: '2001:db8:7:8::1',
    });
    expect(ok.person.email).toBe('owner@example.org');
  });

  it('counts a burst of concurrent failures exactly: the pair gets no more than its budget', async () => {
    const { d, port } = await listening({ signInRateLimit: '0', signInFailureLimit: '3' });
    await d.addMember('owner@example.org', { role: 'owner' });
    const answers = await Promise.all(
      Array.from({ length: 12 }, () =>
        send(port, '127.0.0.2', d.origin, 'session', { email: 'owner@example.org', password: 'wrong' }),
      ),
    );
    const statuses = answers.map((a) => a.status).sort();
    expect(statuses.filter((s) => s === 401)).toHaveLength(3);
    expect(statuses.filter((s) => s === 429)).toHaveLength(9);
  });

  it('slows an address attacked from many clients by a delay capped at a few seconds, never a lock', async () => {
    h = await createDashboardHarness({ flags: { signInRateLimit: '0', signInFailureLimit: '3' } });
    await h.addMember('owner@example.org', { role: 'owner' });
    const { db } = h.runtime.ctx;
    const settings = h.runtime.ctx.config;
    const delays: number[] = [];
    const deps = { db, clock: h.clock, settings, sleep: async (ms: number) => void delays.push(ms) };
    for (let client = 2; client < 5; client++)
      for (let i = 0; i < 3; i++)
        await expect(
          signIn(deps, { email: 'owner@example.org', password: 'wrong', clientIp: `127.0.0.${client}` }),
        ).rejects.toMatchObject({ code: 'invalid_credentials' });
    expect(Math.max(...delays)).toBe(MAX_SIGN_IN_DELAY_MS);
    const ok = await signIn(deps, { email: 'owner@example.org', password: PASSWORD, clientIp: '127.0.0.40' });
    expect(ok.person.email).toBe('owner@example.org');
    expect(delays.at(-1)).toBe(MAX_SIGN_IN_DELAY_MS);
  });
});

describe("a browser that signed in as the person before is not slowed by others' failures", SLOW, () => {
  it('skips the per-address delay for the device token of the person, and only for it', async () => {
    h = await createDashboardHarness({ flags: { signInRateLimit: '0', signInFailureLimit: '3' } });
    await h.addMember('owner@example.org', { role: 'owner' });
    const { db } = h.runtime.ctx;
    const settings = h.runtime.ctx.config;
    const delays: number[] = [];
    const deps = { db, clock: h.clock, settings, sleep: async (ms: number) => void delays.push(ms) };
    const owner = (p: { password?: string; device?: string; client?: string } = {}) =>
      signIn(deps, {
        email: 'owner@example.org',
        password: p.password ?? PASSWORD,
        clientIp: p.client ?? '127.0.0.40',
        ...(p.device === undefined ? {} : { device: p.device }),
      });
    const { person } = await owner();
    const device = (await rotateDeviceToken(db, h.clock, person.id, undefined))!;
    const attack = async (from: number): Promise<void> => {
      for (let client = from; client < from + 3; client++)
        for (let i = 0; i < 3; i++)
          await expect(owner({ password: 'wrong', client: `127.0.0.${client}` })).rejects.toMatchObject({
            code: 'invalid_credentials',
          });
    };
    await attack(2);
    delays.length = 0;
    await owner({ device });
    expect(delays).toEqual([]);
    // Another person's token, a forged one, or none: slowed as before.
    await attack(5);
    await h.addMember('other@example.org');
    const other = await db
      .selectFrom('people')
      .select('id')
      .where('email', '=', 'other@example.org')
      .executeTakeFirstOrThrow();
    for (const token of [
      (await rotateDeviceToken(db, h.clock, other.id, undefined))!,
      device.slice(1) + 'A',
      undefined,
    ]) {
      delays.length = 0;
      await expect(owner({ password: 'wrong', device: token })).rejects.toMatchObject({
        code: 'invalid_credentials',
      });
      expect(delays.at(-1)).toBe(MAX_SIGN_IN_DELAY_MS);
    }
  });

  it('checks its password ahead of guesses from elsewhere that fill the hash queue', async () => {
    h = await createDashboardHarness({ flags: { signInRateLimit: '0', signInFailureLimit: '3' } });
    await h.addMember('owner@example.org', { role: 'owner' });
    const { db } = h.runtime.ctx;
    const deps = { db, clock: h.clock, settings: h.runtime.ctx.config, sleep: async () => undefined };
    const first = await signIn(deps, {
      email: 'owner@example.org',
      password: PASSWORD,
      clientIp: '127.0.0.40',
    });
    const device = (await rotateDeviceToken(db, h.clock, first.person.id, undefined))!;
    const stored = first.person.password_hash!;
    const guesses = Array.from({ length: HASH_CONCURRENCY + HASH_QUEUE_LIMIT }, () =>
      verifyPassword('a guess', stored),
    );
    await expect(verifyPassword('one more guess', stored)).rejects.toMatchObject({
      code: 'service_unavailable',
    });
    const ok = await signIn(deps, {
      email: 'owner@example.org',
      password: PASSWORD,
      clientIp: '127.0.0.40',
      device,
    });
    expect(ok.person.id).toBe(first.person.id);
    await Promise.all(guesses);
  });

  it('forgets every browser when the password changes', async () => {
    h = await createDashboardHarness();
    await h.addMember('owner@example.org', { role: 'owner' });
    const { db } = h.runtime.ctx;
    const person = await db
      .selectFrom('people')
      .selectAll()
      .where('email', '=', 'owner@example.org')
      .executeTakeFirstOrThrow();
    const device = (await rotateDeviceToken(db, h.clock, person.id, undefined))!;
    expect(await isDeviceOf(db, h.clock, person, device)).toBe(true);
    await setPersonPassword(db, person.id, await hashPassword('a brand new password'));
    const changed = await db
      .selectFrom('people')
      .selectAll()
      .where('id', '=', person.id)
      .executeTakeFirstOrThrow();
    expect(await isDeviceOf(db, h.clock, changed, device)).toBe(false);
  });

  it('sets the device cookie, HttpOnly, at a complete sign-in only', async () => {
    const { d, port } = await listening({ signInRateLimit: '0' });
    await d.addMember('owner@example.org', { role: 'owner' });
    const deviceCookie = (res: { headers: Record<string, unknown> }): string | undefined =>
      ([res.headers['set-cookie'] ?? []].flat() as string[]).find((c) => c.startsWith('mv_device='));
    const wrong = await send(port, '127.0.0.2', d.origin, 'session', {
      email: 'owner@example.org',
      password: 'a wrong guess',
    });
    expect(wrong.status).toBe(401);
    expect(deviceCookie(wrong)).toBeUndefined();
    const ok = await send(port, '127.0.0.2', d.origin, 'session', {
      email: 'owner@example.org',
      password: PASSWORD,
    });
    expect(ok.status).toBe(200);
    const set = deviceCookie(ok)!;
    expect(set).toMatch(/HttpOnly/i);
    expect(set).toMatch(/SameSite=Lax/i);
    const { db } = d.runtime.ctx;
    const person = await db
      .selectFrom('people')
      .selectAll()
      .where('email', '=', 'owner@example.org')
      .executeTakeFirstOrThrow();
    expect(await isDeviceOf(db, d.clock, person, set.slice('mv_device='.length).split(';')[0])).toBe(true);
  });
});

describe('unauthenticated requests cannot queue up the password hash', SLOW, () => {
  // At the suite's 2^10 a hash takes about a millisecond, and the queue may drain as fast as the
  // 40 requests arrive (CI once saw no 503). At 2^16 (64 MiB, a few hundred ms) two hashes outlast
  // the whole burst many times over, so the queue fills as it does in production.
  beforeAll(() => setPasswordHashCost(16));
  afterAll(() => setPasswordHashCost(10));

  it(`answers 503 with Retry-After past ${HASH_CONCURRENCY} running and ${HASH_QUEUE_LIMIT} waiting hashes`, async () => {
    const { d, port } = await listening({ signInRateLimit: '0', signInFailureLimit: '0' });
    const answers = await Promise.all(
      Array.from({ length: 40 }, (_, i) =>
        send(port, `127.0.0.${2 + (i % 20)}`, d.origin, 'session', {
          email: `nobody${i}@example.org`,
          password: 'a guess at it',
        }),
      ),
    );
    const busy = answers.filter((a) => a.status === 503);
    expect(busy.length).toBeGreaterThan(0);
    expect(busy.every((a) => a.headers['retry-after'] === '1')).toBe(true);
    expect(JSON.parse(busy[0]!.body)).toMatchObject({ error: 'service_unavailable' });
    expect(answers.every((a) => a.status === 503 || a.status === 401)).toBe(true);
  });
});
