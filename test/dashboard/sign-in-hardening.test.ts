/**
 * Issue 26, the sign-in half: what a stolen password leaves in the security log and the person's
 * mailbox, challenges that end with the password, turning two factors on with the password, the
 * invitation preview that tells an owner nothing of other accounts, an operator's own sessions,
 * operator routes that anonymous callers cannot tell from unknown ones, and device cookies that
 * change at each sign-in. Through the dashboard's real app on the test store (SQLite, or
 * PostgreSQL with MAILVERDICT_TEST_STORE=postgres).
 */
import { afterEach, describe, expect, it } from 'vitest';
import { SECOND } from '../../src/clock.js';
import type {
  AuditPage,
  RecoveryCodes,
  SecondFactorChallenge,
  SessionView,
  TwoFactorEnrolment,
} from '../../src/dashboard/contract.js';
import { totpCode } from '../../src/services/people/two-factor.service.js';
import { SECOND_FACTOR_ALERT_AFTER } from '../../src/services/people/sign-in-alerts.js';
import { isDeviceOf } from '../../src/services/people/sign-in-device.js';
import { startMailSink, type MailSink } from '../kit/mail-sink.js';
import { waitFor } from '../kit/wait-for.js';
import {
  createDashboardHarness,
  errorCode,
  PASSWORD,
  type Browser,
  type DashboardHarness,
} from '../kit/dashboard-kit.js';

/** Each test hashes passwords with scrypt (100-200 ms idle, seconds on a loaded 2-core machine). */
const SLOW = { timeout: 90_000 };
const OWNER = 'owner@example.org';

let h: DashboardHarness | undefined;
let sink: MailSink | undefined;
afterEach(async () => {
  await h?.close();
  await sink?.close();
  h = undefined;
  sink = undefined;
});

function nextStep(d: DashboardHarness): void {
  d.manualClock.advance(30 * SECOND);
}

function code(d: DashboardHarness, secret: string): string {
  return totpCode(secret, d.manualClock.now());
}

/** A six-digit code that is none of the codes the server accepts now (one step either side). */
function wrongCode(d: DashboardHarness, secret: string): string {
  const now = d.manualClock.now().getTime();
  const valid = [-1, 0, 1].map((s) => totpCode(secret, new Date(now + s * 30 * SECOND)));
  return ['000000', '111111', '222222', '333333'].find((c) => !valid.includes(c))!;
}

/** Turns TOTP on for the signed-in browser (with its password); its secret and recovery codes. */
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

async function firstStep(b: Browser, email: string, password = PASSWORD): Promise<string> {
  const res = await b.post('session', { email, password });
  expect(res.statusCode).toBe(202);
  return res.json<SecondFactorChallenge>().challenge;
}

async function secondStep(b: Browser, challenge: string, value: string) {
  const res = await b.post('session/second-factor', { challenge, code: value });
  if (res.statusCode === 200) b.csrf = res.json<SessionView>().csrf_token;
  return res;
}

async function log(b: Browser, type?: string): Promise<AuditPage['entries']> {
  const res = await b.get(type === undefined ? 'audit' : `audit?type=${type}`);
  expect(res.statusCode).toBe(200);
  return res.json<AuditPage>().entries;
}

describe('a stolen password leaves a trace (issue 26, 1)', SLOW, () => {
  it('logs the password step that passed and every wrong second factor after it', async () => {
    const d = (h = await createDashboardHarness());
    const { browser: owner } = await d.signedIn();
    const { secret } = await enrol(d, owner);
    nextStep(d);
    const thief = d.browser();
    const challenge = await firstStep(thief, OWNER);
    for (let i = 0; i < 3; i++) {
      const wrong = await secondStep(thief, challenge, wrongCode(d, secret));
      expect(wrong.statusCode).toBe(401);
    }
    const wrongRecovery = await secondStep(thief, challenge, 'aaaa-bbbb-cccc-dddd');
    expect(wrongRecovery.statusCode).toBe(401);

    const passed = await log(owner, 'sign_in_password_ok');
    expect(passed).toHaveLength(1);
    expect(passed[0]).toMatchObject({ actor: { kind: 'member', email: OWNER }, client_ip: '127.0.0.1' });
    const failed = await log(owner, 'sign_in_second_factor_failed');
    // Entries of one instant (the harness's clock stands still) have no order between them.
    expect(failed.map((e) => e.details.second_factor).sort()).toEqual([
      'recovery_code',
      'totp',
      'totp',
      'totp',
    ]);
    // No session was opened, so no sign_in beyond the owner's own.
    expect(await log(owner, 'sign_in')).toHaveLength(1);
  });

  it('does not log a password step for a person without two factors (the sign_in says it all)', async () => {
    const d = (h = await createDashboardHarness());
    const { browser: owner } = await d.signedIn();
    await d.browser().signIn(OWNER);
    expect(await log(owner, 'sign_in_password_ok')).toEqual([]);
    expect(await log(owner, 'sign_in')).toHaveLength(2);
  });

  it('logs a sign-in with a recovery code as such, with the codes left', async () => {
    const d = (h = await createDashboardHarness());
    const { browser: owner } = await d.signedIn();
    const { secret, recovery } = await enrol(d, owner);
    nextStep(d);
    const b = d.browser();
    expect((await secondStep(b, await firstStep(b, OWNER), recovery[0]!)).statusCode).toBe(200);
    nextStep(d);
    const c = d.browser();
    expect((await secondStep(c, await firstStep(c, OWNER), code(d, secret))).statusCode).toBe(200);
    const signIns = await log(owner, 'sign_in');
    expect(signIns.map((e) => e.details)).toEqual([
      { second_factor: 'totp' },
      { second_factor: 'recovery_code', recovery_codes_left: 9 },
      {},
    ]);
  });

  it(`e-mails the person after ${SECOND_FACTOR_ALERT_AFTER} wrong second factors, once a day`, async () => {
    sink = await startMailSink();
    const d = (h = await createDashboardHarness({ flags: { smtpRelayUrl: sink.url } }));
    const { browser: owner } = await d.signedIn();
    const { secret } = await enrol(d, owner);
    nextStep(d);
    const thief = d.browser();
    const challenge = await firstStep(thief, OWNER);
    const notices = () => sink!.messages.filter((m) => /wrong two-factor codes/i.test(m.text));
    const invited = (n: number) => sink!.messages.filter((m) => m.to.includes(`marker${n}@example.org`));
    for (let i = 1; i < SECOND_FACTOR_ALERT_AFTER; i++)
      expect((await secondStep(thief, challenge, wrongCode(d, secret))).statusCode).toBe(401);
    // A mail sent after the wrong codes, to know the relay has had its chance.
    expect((await owner.post('members', { email: 'marker1@example.org' })).statusCode).toBe(201);
    await waitFor('the first marker', async () => (invited(1).length > 0 ? true : undefined), 10_000);
    expect(notices()).toEqual([]);

    expect((await secondStep(thief, challenge, wrongCode(d, secret))).statusCode).toBe(401);
    const [notice] = await waitFor(
      'the notice',
      async () => (notices().length > 0 ? notices() : undefined),
      10_000,
    );
    expect(notice!.to).toEqual([OWNER]);
    expect(notice!.text).toContain(`${SECOND_FACTOR_ALERT_AFTER} wrong two-factor codes`);
    expect(notice!.text).toContain('127.0.0.1');
    expect(notice!.text).not.toContain(secret);

    // More wrong codes the same day: no second mail.
    for (let i = 0; i < 2; i++)
      expect((await secondStep(thief, challenge, wrongCode(d, secret))).statusCode).toBe(401);
    expect((await owner.post('members', { email: 'marker2@example.org' })).statusCode).toBe(201);
    await waitFor('the second marker', async () => (invited(2).length > 0 ? true : undefined), 10_000);
    expect(notices()).toHaveLength(1);
  });
});

describe('a challenge ends with the password (issue 26, 5)', SLOW, () => {
  it('refuses a challenge earned with the old password once the password changed', async () => {
    const d = (h = await createDashboardHarness());
    const { browser: owner } = await d.signedIn();
    const { secret } = await enrol(d, owner);
    nextStep(d);
    const thief = d.browser();
    const challenge = await firstStep(thief, OWNER);
    const changed = await owner.post('account/password', {
      current_password: PASSWORD,
      new_password: 'an entirely new secret',
    });
    expect(changed.statusCode).toBe(204);
    const res = await secondStep(thief, challenge, code(d, secret));
    expect(res.statusCode).toBe(401);
    expect(errorCode(res)).toBe('unauthenticated');
    expect(thief.cookie).toBeNull();
  });

  it('refuses a challenge earned with the old password once a reset link set a new one', async () => {
    sink = await startMailSink();
    const d = (h = await createDashboardHarness({ flags: { smtpRelayUrl: sink.url } }));
    const { browser: owner } = await d.signedIn();
    const { secret } = await enrol(d, owner);
    nextStep(d);
    const thief = d.browser();
    const challenge = await firstStep(thief, OWNER);
    expect((await d.browser().post('password-resets', { email: OWNER })).statusCode).toBe(202);
    const mail = await waitFor(
      'the reset mail',
      async () => sink!.messages.find((m) => m.text.includes('/reset-password#')),
      10_000,
    );
    const token = /\/reset-password#([A-Za-z0-9_-]{43})/.exec(mail.text)![1]!;
    const reset = await d
      .browser()
      .post('password-resets/accept', { token, password: 'an entirely new secret' });
    expect(reset.statusCode).toBe(202);
    const res = await secondStep(thief, challenge, code(d, secret));
    expect(res.statusCode).toBe(401);
    expect(errorCode(res)).toBe('unauthenticated');
  });
});

describe('turning two factors on asks for the password (issue 26, 6)', SLOW, () => {
  it('refuses a stolen session without the password: TOTP stays off', async () => {
    const d = (h = await createDashboardHarness());
    const { browser: owner } = await d.signedIn();
    const started = await owner.post('account/two-factor/enrolment');
    const { secret } = started.json<TwoFactorEnrolment>();
    const bare = await owner.post('account/two-factor/enrolment/confirm', { code: code(d, secret) });
    expect(bare.statusCode).toBe(422);
    expect(errorCode(bare)).toBe('invalid_request');
    const guessed = await owner.post('account/two-factor/enrolment/confirm', {
      code: code(d, secret),
      password: 'not the password',
    });
    expect(guessed.statusCode).toBe(401);
    expect(errorCode(guessed)).toBe('invalid_credentials');
    expect((await owner.get('account/two-factor')).json<{ enabled: boolean }>().enabled).toBe(false);
    expect(await log(owner, 'two_factor_enabled')).toEqual([]);
  });

  it('turns on with the password and a code, and e-mails the person', async () => {
    sink = await startMailSink();
    const d = (h = await createDashboardHarness({ flags: { smtpRelayUrl: sink.url } }));
    const { browser: owner } = await d.signedIn();
    await enrol(d, owner);
    expect(await log(owner, 'two_factor_enabled')).toHaveLength(1);
    const notice = await waitFor(
      'the notice',
      async () => sink!.messages.find((m) => /two-factor sign-in was turned on/i.test(m.text)),
      10_000,
    );
    expect(notice.to).toEqual([OWNER]);
  });
});

describe("an operator's own sessions (issue 26, 8)", SLOW, () => {
  it('lists and ends them though the operator belongs to no account', async () => {
    const d = (h = await createDashboardHarness());
    const ops = await d.signedInOperator('ops@example.org');
    const list = await ops.get('sessions');
    expect(list.statusCode).toBe(200);
    type Item = { id: string; current: boolean };
    const sessions = list.json<{ sessions: Item[] }>().sessions;
    // The session its reset link opened, and the one it signed in with.
    expect(sessions.map((s) => s.current).sort()).toEqual([false, true]);
    const other = sessions.find((s) => !s.current)!;
    expect((await ops.request('DELETE', `sessions/${other.id}`)).statusCode).toBe(204);
    const left = (await ops.get('sessions')).json<{ sessions: Item[] }>().sessions;
    expect(left.map((s) => s.id)).toEqual([sessions.find((s) => s.current)!.id]);
    expect((await ops.request('DELETE', `sessions/${left[0]!.id}`)).statusCode).toBe(204);
    expect((await ops.get('session')).statusCode).toBe(401);
  });
});

describe('operator routes and unknown ones answer alike (issue 26, 9)', SLOW, () => {
  const OPERATOR_ROUTES = [
    ['GET', 'operator/accounts'],
    ['GET', 'operator/health'],
    ['POST', 'operator/accounts'],
    ['PATCH', 'operator/accounts/acct_x'],
    ['GET', 'session/operator'],
  ] as const;
  const UNKNOWN_ROUTES = [
    ['GET', 'operator/nothing-here'],
    ['GET', 'nothing-here'],
    ['POST', 'nothing-here'],
    ['PATCH', 'nothing-here/acct_x'],
    ['GET', 'session/nothing'],
  ] as const;
  type Route = readonly ['GET' | 'POST' | 'PATCH', string];
  const answer = async (b: Browser, [method, path]: Route, headers?: Record<string, string>) => {
    const res = await b.request(method, path, {
      ...(method === 'GET' ? {} : { body: {} }),
      ...(headers === undefined ? {} : { headers }),
    });
    return `${res.statusCode} ${errorCode(res)}`;
  };

  it('gives an anonymous caller the same answers for both, whatever the request', async () => {
    const d = (h = await createDashboardHarness());
    const anonymous = d.browser();
    const answers = async (routes: readonly Route[], headers?: Record<string, string>) =>
      Promise.all(routes.map((r) => answer(anonymous, r, headers)));
    for (const headers of [undefined, { origin: 'https://evil.example' }]) {
      const operator = await answers(OPERATOR_ROUTES, headers);
      const unknown = await answers(UNKNOWN_ROUTES, headers);
      expect(new Set(unknown)).toEqual(new Set(operator));
    }
    expect(await answer(anonymous, ['GET', 'operator/accounts'])).toBe('401 unauthenticated');
    expect(await answer(anonymous, ['GET', 'nothing-here'])).toBe('401 unauthenticated');
  });

  it('gives a signed-in member 404 for both', async () => {
    const d = (h = await createDashboardHarness());
    const { browser: member } = await d.signedIn();
    for (const route of [...OPERATOR_ROUTES, ...UNKNOWN_ROUTES])
      expect(await answer(member, route), route.join(' ')).toBe('404 not_found');
  });
});

describe('the invitation preview tells an owner nothing of other accounts (issue 26, 4)', SLOW, () => {
  it('answers for a person of another account and an operator as for a brand-new address', async () => {
    const d = (h = await createDashboardHarness());
    const { browser: owner } = await d.signedIn();
    const other = await d.createOtherAccount();
    await d.addMember('dana@example.org', { accountId: other.accountId });
    await d.signedInOperator('ops@example.org');
    const shapes: Record<string, unknown> = {};
    for (const email of ['new@example.org', 'dana@example.org', 'ops@example.org']) {
      // The next second: each address's two link requests start a fresh per-client allowance.
      d.manualClock.advance(SECOND);
      const invited = await owner.post('members', { email });
      expect(invited.statusCode).toBe(201);
      const { link, expires_at } = invited.json<{ link: string; expires_at: string }>();
      const token = link.split('#')[1]!;
      const preview = await d.browser().post('invitations/preview', { token });
      expect(preview.statusCode).toBe(200);
      expect(preview.json()).toEqual({ email, expires_at });
      // A weak password is refused alike, before anything is said of the address.
      const weak = await d.browser().post('invitations/accept', { token, password: 'password12' });
      shapes[email] = [weak.statusCode, errorCode(weak)];
    }
    expect(shapes['dana@example.org']).toEqual(shapes['new@example.org']);
    expect(shapes['ops@example.org']).toEqual(shapes['new@example.org']);
    expect(shapes['new@example.org']).toEqual([422, 'weak_password']);
  });
});

describe('the device cookie changes at each sign-in (issue 26, also)', SLOW, () => {
  it('gives a new one at each sign-in, and the one presented stops lifting the delay', async () => {
    const d = (h = await createDashboardHarness({ flags: { signInRateLimit: '0' } }));
    await d.addMember(OWNER, { role: 'owner' });
    const signInWith = async (device: string | undefined): Promise<string> => {
      const res = await d.app.inject({
        method: 'POST',
        url: '/dashboard/api/session',
        headers: {
          origin: d.origin,
          'content-type': 'application/json',
          ...(device === undefined ? {} : { cookie: `mv_device=${device}` }),
        },
        payload: JSON.stringify({ email: OWNER, password: PASSWORD }),
      });
      expect(res.statusCode).toBe(200);
      const set = [res.headers['set-cookie'] ?? []].flat().find((c) => c.startsWith('mv_device='))!;
      return set.slice('mv_device='.length).split(';')[0]!;
    };
    const first = await signInWith(undefined);
    const second = await signInWith(first);
    expect(second).not.toBe(first);
    const { db } = d.runtime.ctx;
    const person = await db
      .selectFrom('people')
      .selectAll()
      .where('email', '=', OWNER)
      .executeTakeFirstOrThrow();
    expect(await isDeviceOf(db, d.clock, person, first)).toBe(false);
    expect(await isDeviceOf(db, d.clock, person, second)).toBe(true);
  });
});
