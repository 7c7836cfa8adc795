/**
 * Two-factor sign-in (issue 16) through the dashboard's API with real cookies: turning TOTP on
 * (secret, QR code, first code, recovery codes shown once), the sign-in's second step (no session
 * before it; a challenge that is short-lived, single-use and bound to its member), wrong and
 * replayed codes, recovery codes used once, the owner's requirement, and turning it off.
 * TOTP codes are computed from the secret at the harness's clock, the one the server checks with.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { MINUTE, SECOND } from '../../src/clock.js';
import type {
  AuditPage,
  RecoveryCodes,
  SecondFactorChallenge,
  SessionView,
  TwoFactorEnrolment,
  TwoFactorStatus,
} from '../../src/dashboard/contract.js';
import { requestPasswordReset } from '../../src/services/people/members.service.js';
import { sealLegacySecrets } from '../../src/services/operators/secrets.service.js';
import { totpCode } from '../../src/services/people/two-factor.service.js';
import {
  createDashboardHarness,
  errorCode,
  PASSWORD,
  sessionCookieOf,
  type Browser,
  type DashboardHarness,
} from '../kit/dashboard-kit.js';

/** Each test hashes passwords with scrypt (100-200 ms idle, seconds on a loaded 2-core machine). */
const SLOW = { timeout: 60_000 };

let h: DashboardHarness | undefined;
afterEach(async () => {
  await h?.close();
  h = undefined;
});

async function harness(flags: Record<string, string> = {}): Promise<DashboardHarness> {
  h = await createDashboardHarness({ flags });
  return h;
}

/** The next 30-second step: a code not used yet. */
function nextStep(d: DashboardHarness): void {
  d.manualClock.advance(30 * SECOND);
}

function code(d: DashboardHarness, secret: string): string {
  return totpCode(secret, d.manualClock.now());
}

/** Turns TOTP on for the signed-in browser; its secret and recovery codes. */
async function enrol(d: DashboardHarness, b: Browser): Promise<{ secret: string; recovery: string[] }> {
  const started = await b.post('account/two-factor/enrolment');
  expect(started.statusCode).toBe(200);
  const { secret } = started.json<TwoFactorEnrolment>();
  const confirmed = await b.post('account/two-factor/enrolment/confirm', {
    code: code(d, secret),
    password: PASSWORD,
  });
  expect(confirmed.statusCode).toBe(200);
  return { secret, recovery: confirmed.json<RecoveryCodes>().recovery_codes };
}

/** The first step of a sign-in for a member with two factors: 202 and a challenge, no cookie. */
async function firstStep(b: Browser, email: string): Promise<string> {
  const res = await b.post('session', { email, password: PASSWORD });
  expect(res.statusCode).toBe(202);
  expect(sessionCookieOf(res)).toBeUndefined();
  const body = res.json<SecondFactorChallenge>();
  expect(body.second_factor_required).toBe(true);
  return body.challenge;
}

async function secondStep(b: Browser, challenge: string, value: string) {
  const res = await b.post('session/second-factor', { challenge, code: value });
  if (res.statusCode === 200) b.csrf = res.json<SessionView>().csrf_token;
  return res;
}

describe('turning two-factor sign-in on', SLOW, () => {
  it('shows a secret and a QR code drawn by the server, and turns on with a first valid code', async () => {
    const d = await harness();
    const { browser: b } = await d.signedIn();
    const started = await b.post('account/two-factor/enrolment');
    expect(started.statusCode).toBe(200);
    const enrolment = started.json<TwoFactorEnrolment>();
    expect(enrolment.secret).toMatch(/^[A-Z2-7]{32}$/);
    expect(enrolment.otpauth_uri).toMatch(/^otpauth:\/\/totp\/mailverdict:owner%40example\.org\?/);
    expect(enrolment.otpauth_uri).toContain(`secret=${enrolment.secret}`);
    expect(enrolment.qr_svg).toMatch(/^<svg [^>]*xmlns="http:\/\/www\.w3\.org\/2000\/svg"/);
    expect(enrolment.qr_svg).not.toMatch(/https?:\/\/(?!www\.w3\.org)/);
    // Not on until a code proves the app has the secret.
    expect((await b.get('account/two-factor')).json<TwoFactorStatus>().enabled).toBe(false);

    const wrong = await b.post('account/two-factor/enrolment/confirm', {
      code: '000000',
      password: PASSWORD,
    });
    expect(wrong.statusCode).toBe(401);
    expect(errorCode(wrong)).toBe('invalid_credentials');

    const ok = await b.post('account/two-factor/enrolment/confirm', {
      code: code(d, enrolment.secret),
      password: PASSWORD,
    });
    expect(ok.statusCode).toBe(200);
    const { recovery_codes } = ok.json<RecoveryCodes>();
    expect(recovery_codes).toHaveLength(10);
    expect(new Set(recovery_codes).size).toBe(10);
    for (const c of recovery_codes) expect(c).toMatch(/^[0-9a-z]{4}(-[0-9a-z]{4}){3}$/);

    const status = await b.get('account/two-factor');
    expect(status.json<TwoFactorStatus>()).toMatchObject({ enabled: true, recovery_codes_left: 10 });
    // The secret is never given out again.
    expect(status.body).not.toContain(enrolment.secret);
    expect((await b.get('session')).json<SessionView>().two_factor).toEqual({
      enabled: true,
      required: false,
    });
    const again = await b.post('account/two-factor/enrolment');
    expect(again.statusCode).toBe(422);
  });

  it('stores recovery codes hashed, never as shown', async () => {
    const d = await harness();
    const { browser: b } = await d.signedIn();
    const { recovery } = await enrol(d, b);
    const rows = await d.runtime.ctx.db.selectFrom('member_recovery_codes').select('code_hash').execute();
    expect(rows).toHaveLength(10);
    const stored = rows.map((r) => r.code_hash).join(' ');
    for (const c of recovery) expect(stored).not.toContain(c.replace(/-/g, ''));
    for (const r of rows) expect(r.code_hash).toMatch(/^[0-9a-f]{64}$/);
  });
});

describe('the TOTP secret at rest', SLOW, () => {
  it('is stored sealed, never as shown, and opens for the sign-in', async () => {
    const d = await harness();
    const { browser: owner } = await d.signedIn();
    const { secret } = await enrol(d, owner);
    const rows = await d.runtime.ctx.db.selectFrom('member_two_factor').select('secret').execute();
    expect(rows).toHaveLength(1);
    expect(rows[0]!.secret).toMatch(/^enc:v1:/);
    expect(rows[0]!.secret).not.toContain(secret.slice(0, 8));
    nextStep(d);
    const b = d.browser();
    const res = await secondStep(b, await firstStep(b, 'owner@example.org'), code(d, secret));
    expect(res.statusCode).toBe(200);
  });

  it('opens one an older version stored in plaintext, and seals it at the next start', async () => {
    const d = await harness();
    const { browser: owner } = await d.signedIn();
    const { secret } = await enrol(d, owner);
    const { db } = d.runtime.ctx;
    await db.updateTable('member_two_factor').set({ secret }).execute();
    nextStep(d);
    const b = d.browser();
    expect((await secondStep(b, await firstStep(b, 'owner@example.org'), code(d, secret))).statusCode).toBe(
      200,
    );

    expect(await sealLegacySecrets(db)).toMatchObject({ 'member_two_factor.secret': 1 });
    const [row] = await db.selectFrom('member_two_factor').select('secret').execute();
    expect(row!.secret).toMatch(/^enc:v1:/);
    nextStep(d);
    const again = d.browser();
    const res = await secondStep(again, await firstStep(again, 'owner@example.org'), code(d, secret));
    expect(res.statusCode).toBe(200);
  });
});

describe('signing in with two factors', SLOW, () => {
  it('opens no session after the password alone, and one after a valid code', async () => {
    const d = await harness();
    const { browser: owner } = await d.signedIn();
    const { secret } = await enrol(d, owner);
    nextStep(d);
    const b = d.browser();
    const challenge = await firstStep(b, 'owner@example.org');
    expect(b.cookie).toBeNull();
    expect((await b.get('session')).statusCode).toBe(401);

    const res = await secondStep(b, challenge, code(d, secret));
    expect(res.statusCode).toBe(200);
    expect(sessionCookieOf(res)).toMatch(/^mv_session=/);
    expect(res.json<SessionView>().member!.email).toBe('owner@example.org');
    expect((await b.get('keys')).statusCode).toBe(200);
  });

  it('refuses a wrong code and counts it: past the limit even the right code is refused', async () => {
    const d = await harness({ signInFailureLimit: '3' });
    const { browser: owner } = await d.signedIn();
    const { secret } = await enrol(d, owner);
    nextStep(d);
    const b = d.browser();
    const challenge = await firstStep(b, 'owner@example.org');
    for (let i = 0; i < 3; i++) {
      const wrong = await secondStep(b, challenge, '123456');
      expect(wrong.statusCode).toBe(401);
      expect(errorCode(wrong)).toBe('invalid_credentials');
    }
    const limited = await secondStep(b, challenge, code(d, secret));
    expect(limited.statusCode).toBe(429);
    expect(errorCode(limited)).toBe('rate_limit_exceeded');
    expect(Number(limited.headers['retry-after'])).toBeGreaterThan(0);
    expect(b.cookie).toBeNull();
  });

  it('refuses a code already used within its window, and a challenge used once', async () => {
    const d = await harness();
    const { browser: owner } = await d.signedIn();
    const { secret } = await enrol(d, owner);
    nextStep(d);
    const used = code(d, secret);
    const first = d.browser();
    const challenge = await firstStep(first, 'owner@example.org');
    expect((await secondStep(first, challenge, used)).statusCode).toBe(200);

    // The same code, seconds later, still inside its 30-second step: refused.
    d.manualClock.advance(5 * SECOND);
    const second = d.browser();
    const replay = await secondStep(second, await firstStep(second, 'owner@example.org'), used);
    expect(replay.statusCode).toBe(401);
    expect(errorCode(replay)).toBe('invalid_credentials');
    // The challenge the first browser spent is gone.
    const reused = await secondStep(d.browser(), challenge, code(d, secret));
    expect(reused.statusCode).toBe(401);
    expect(errorCode(reused)).toBe('unauthenticated');
  });

  it('lets a challenge live 5 minutes', async () => {
    const d = await harness();
    const { browser: owner } = await d.signedIn();
    const { secret } = await enrol(d, owner);
    const b = d.browser();
    const challenge = await firstStep(b, 'owner@example.org');
    d.manualClock.advance(5 * MINUTE + SECOND);
    const late = await secondStep(b, challenge, code(d, secret));
    expect(late.statusCode).toBe(401);
    expect(errorCode(late)).toBe('unauthenticated');
  });

  it('takes each recovery code once', async () => {
    const d = await harness();
    const { browser: owner } = await d.signedIn();
    const { recovery } = await enrol(d, owner);
    const b = d.browser();
    const res = await secondStep(b, await firstStep(b, 'owner@example.org'), recovery[3]!.toUpperCase());
    expect(res.statusCode).toBe(200);
    expect((await b.get('account/two-factor')).json<TwoFactorStatus>().recovery_codes_left).toBe(9);
    const c = d.browser();
    const again = await secondStep(c, await firstStep(c, 'owner@example.org'), recovery[3]!);
    expect(again.statusCode).toBe(401);
    expect(errorCode(again)).toBe('invalid_credentials');
  });

  it("binds a challenge to its member: another member's code does not complete it", async () => {
    const d = await harness();
    const { browser: owner } = await d.signedIn();
    await enrol(d, owner);
    await d.addMember('bea@example.org');
    const bea = d.browser();
    await bea.signIn('bea@example.org');
    nextStep(d);
    const beas = await enrol(d, bea);
    nextStep(d);
    const b = d.browser();
    const res = await secondStep(b, await firstStep(b, 'owner@example.org'), code(d, beas.secret));
    expect(res.statusCode).toBe(401);
    const recovery = await secondStep(b, await firstStep(b, 'owner@example.org'), beas.recovery[0]!);
    expect(recovery.statusCode).toBe(401);
  });

  it('asks for the second factor after a password reset link too', async () => {
    const d = await harness();
    const { browser: owner } = await d.signedIn();
    const { secret } = await enrol(d, owner);
    const { db } = d.runtime.ctx;
    const sent = await requestPasswordReset(
      {
        db,
        clock: d.manualClock,
        config: d.runtime.ctx.config,
        mailer: { send: async () => undefined },
        logger: { warn: () => undefined },
      },
      'owner@example.org',
    );
    const b = d.browser();
    const res = await b.post('password-resets/accept', {
      token: sent!.token,
      password: 'a brand new password',
    });
    expect(res.statusCode).toBe(202);
    expect(b.cookie).toBeNull();
    nextStep(d);
    const done = await secondStep(b, res.json<SecondFactorChallenge>().challenge, code(d, secret));
    expect(done.statusCode).toBe(200);
  });
});

describe("the owner's requirement", SLOW, () => {
  it('is the owner’s alone, and only once the owner has two factors', async () => {
    const d = await harness();
    const { browser: owner } = await d.signedIn();
    await d.addMember('bea@example.org');
    const bea = d.browser();
    await bea.signIn('bea@example.org');
    const byMember = await bea.request('PUT', 'account/two-factor/requirement', { body: { required: true } });
    expect(byMember.statusCode).toBe(403);
    expect(errorCode(byMember)).toBe('insufficient_permissions');
    const early = await owner.request('PUT', 'account/two-factor/requirement', { body: { required: true } });
    expect(early.statusCode).toBe(422);
    await enrol(d, owner);
    const ok = await owner.request('PUT', 'account/two-factor/requirement', { body: { required: true } });
    expect(ok.statusCode).toBe(200);
    expect(ok.json<TwoFactorStatus>().account_requires).toBe(true);
  });

  it('sends a member without two factors to turn them on, and lets them do nothing else', async () => {
    const d = await harness();
    const { browser: owner } = await d.signedIn();
    await enrol(d, owner);
    await owner.request('PUT', 'account/two-factor/requirement', { body: { required: true } });
    await d.addMember('bea@example.org');
    const bea = d.browser();
    const view = await bea.signIn('bea@example.org');
    expect(view.two_factor).toEqual({ enabled: false, required: true });
    for (const path of ['keys', 'overview', 'members', 'settings']) {
      const res = await bea.get(path);
      expect(res.statusCode, path).toBe(403);
      expect(errorCode(res)).toBe('two_factor_required');
    }
    const create = await bea.post('keys', { name: 'k', kind: 'test', scopes: ['verify'] });
    expect(errorCode(create)).toBe('two_factor_required');
    nextStep(d);
    await enrol(d, bea);
    expect((await bea.get('keys')).statusCode).toBe(200);
    expect((await bea.get('session')).json<SessionView>().two_factor).toEqual({
      enabled: true,
      required: true,
    });
  });
});

describe('turning two-factor sign-in off', SLOW, () => {
  it('needs the password and a current code', async () => {
    const d = await harness();
    const { browser: b } = await d.signedIn();
    const { secret } = await enrol(d, b);
    nextStep(d);
    const noPassword = await b.post('account/two-factor/disable', {
      password: 'not it at all',
      code: code(d, secret),
    });
    expect(noPassword.statusCode).toBe(401);
    const noCode = await b.post('account/two-factor/disable', { password: PASSWORD, code: '000000' });
    expect(noCode.statusCode).toBe(401);
    expect((await b.get('account/two-factor')).json<TwoFactorStatus>().enabled).toBe(true);
    const off = await b.post('account/two-factor/disable', { password: PASSWORD, code: code(d, secret) });
    expect(off.statusCode).toBe(204);
    expect((await b.get('account/two-factor')).json<TwoFactorStatus>()).toMatchObject({
      enabled: false,
      recovery_codes_left: 0,
    });
    // The password alone signs in again.
    await d.browser().signIn('owner@example.org');
    // Both changes are in the account's security log, newest first.
    const log = (await b.get('audit?limit=50')).json<AuditPage>().entries.map((e) => e.type);
    expect(log.filter((t) => t.startsWith('two_factor_'))).toEqual([
      'two_factor_disabled',
      'two_factor_enabled',
    ]);
  });

  it('is refused while the account requires two factors', async () => {
    const d = await harness();
    const { browser: b } = await d.signedIn();
    const { secret } = await enrol(d, b);
    await b.request('PUT', 'account/two-factor/requirement', { body: { required: true } });
    nextStep(d);
    const res = await b.post('account/two-factor/disable', { password: PASSWORD, code: code(d, secret) });
    expect(res.statusCode).toBe(422);
  });
});
