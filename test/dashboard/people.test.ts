/**
 * People in several accounts (issue 16, "People in several accounts" and defect 4), through the
 * real app with a browser's cookies and CSRF tokens: an invitation that reveals no other account,
 * joining a second account while signed in, switching, confinement to the current account,
 * removal that keeps the person, operators and their second factor, and the sign-in's audit
 * entry written only once the sign-in is complete.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { SECOND } from '../../src/clock.js';
import type {
  CreatedKey,
  Invitation,
  InvitationPreview,
  SecondFactorChallenge,
  SessionView,
  TwoFactorEnrolment,
} from '../../src/dashboard/contract.js';
import { addOperator } from '../../src/services/operators/operators.service.js';
import { totpCode } from '../../src/services/people/two-factor.service.js';
import {
  createDashboardHarness,
  errorCode,
  PASSWORD,
  type Browser,
  type DashboardHarness,
} from '../kit/dashboard-kit.js';

let h: DashboardHarness | undefined;
afterEach(async () => {
  await h?.close();
  h = undefined;
});

function tokenOf(link: string): string {
  return link.slice(link.indexOf('#') + 1);
}

/** A second account with its owner signed in. */
async function secondAccount(d: DashboardHarness): Promise<{ accountId: string; owner: Browser }> {
  const other = await d.createOtherAccount();
  await d.addMember('owner-b@example.org', { accountId: other.accountId, role: 'owner' });
  const owner = d.browser();
  await owner.signIn('owner-b@example.org');
  return { accountId: other.accountId, owner };
}

async function enrol(d: DashboardHarness, b: Browser): Promise<string> {
  const started = await b.post('account/two-factor/enrolment');
  expect(started.statusCode).toBe(200);
  const { secret } = started.json<TwoFactorEnrolment>();
  const confirmed = await b.post('account/two-factor/enrolment/confirm', {
    code: totpCode(secret, d.manualClock.now()),
    password: PASSWORD,
  });
  expect(confirmed.statusCode).toBe(200);
  return secret;
}

describe('inviting an address (defect 4)', () => {
  it('answers an address of another account exactly as a new one, and reserves nothing', async () => {
    h = await createDashboardHarness();
    const { browser: ownerA } = await h.signedIn();
    const { owner: ownerB } = await secondAccount(h);
    await h.addMember('elsewhere@example.org', {
      accountId: (await ownerB.get('session')).json<SessionView>().account!.id,
    });

    const known = await ownerA.post('members', { email: 'elsewhere@example.org' });
    const fresh = await ownerA.post('members', { email: 'nobody-yet@example.org' });
    expect(known.statusCode).toBe(201);
    expect(fresh.statusCode).toBe(201);
    const [k, f] = [known.json<Invitation>(), fresh.json<Invitation>()];
    expect(Object.keys(k).sort()).toEqual(Object.keys(f).sort());
    expect(k.member.joined_at).toBeNull();
    expect(k.member.role).toBe('member');
    expect(k.link).not.toBeNull();
    expect(k.emailed).toBe(f.emailed);

    // A pending invitation of A's reserves nothing against B: B invites the same address too.
    const alsoB = await ownerB.post('members', { email: 'nobody-yet@example.org' });
    expect(alsoB.statusCode).toBe(201);
  });

  it('never places a person in an account by a password reset: only the invitation joins', async () => {
    h = await createDashboardHarness();
    const { browser: ownerA } = await h.signedIn();
    const invited = (await ownerA.post('members', { email: 'carol@example.org' })).json<Invitation>();
    // The invitation expires unused; a reset link later gives the person a password only.
    h.manualClock.advance(25 * 3600 * SECOND);
    const { requestPasswordReset } = await import('../../src/services/people/members.service.js');
    const reset = await requestPasswordReset(
      { db: h.runtime.ctx.db, clock: h.clock, config: h.runtime.ctx.config, mailer: null, logger: console },
      'carol@example.org',
    );
    const res = await h
      .browser()
      .post('password-resets/accept', { token: reset!.token, password: 'carol chose this one' });
    expect(res.statusCode).toBe(403);
    expect(errorCode(res)).toBe('insufficient_permissions');
    const membership = await h.runtime.ctx.db
      .selectFrom('members')
      .select('joined_at')
      .where('id', '=', invited.member.id)
      .executeTakeFirstOrThrow();
    expect(membership.joined_at).toBeNull();
  });
});

describe('joining a second account', () => {
  it('adds the membership to the signed-in person, asking no password, and the link sets none', async () => {
    h = await createDashboardHarness();
    const { browser: ownerA } = await h.signedIn();
    await h.addMember('dana@example.org');
    const dana = h.browser();
    await dana.signIn('dana@example.org');
    const { owner: ownerB, accountId: accountB } = await secondAccount(h);
    const invitation = (await ownerB.post('members', { email: 'Dana@Example.org' })).json<Invitation>();
    const token = tokenOf(invitation.link!);

    const preview = await h.browser().post('invitations/preview', { token });
    expect(preview.json<InvitationPreview>()).toEqual({
      email: 'dana@example.org',
      expires_at: invitation.expires_at,
    });
    // Not signed in: the link cannot set or overwrite Dana's password.
    const overwrite = await h.browser().post('invitations/accept', { token, password: 'mallory takes over' });
    expect(overwrite.statusCode).toBe(401);
    expect(errorCode(overwrite)).toBe('unauthenticated');
    await h.browser().signIn('dana@example.org');
    // Another signed-in person cannot use Dana's link.
    expect((await ownerA.post('invitations/join', { token })).statusCode).toBe(404);

    const joined = await dana.post('invitations/join', { token });
    expect(joined.statusCode).toBe(200);
    const view = joined.json<SessionView>();
    expect(view.account!.id).toBe(accountB);
    expect(view.member!.role).toBe('member');
    expect(view.memberships.map((m) => m.account_id).sort()).toEqual([h.accountId, accountB].sort());
    expect(view.memberships.filter((m) => m.current).map((m) => m.account_id)).toEqual([accountB]);
    // Used once.
    expect((await dana.post('invitations/join', { token })).statusCode).toBe(404);
    const audit = await h.runtime.ctx.db
      .selectFrom('audit_log')
      .select(['account_id', 'actor_email'])
      .where('type', '=', 'invitation_accepted')
      .where('account_id', '=', accountB)
      .execute();
    expect(audit).toContainEqual({ account_id: accountB, actor_email: 'dana@example.org' });
  });
});

describe('an inviter who sees the link of a new person', () => {
  it('cannot use the password it chose there to accept the person’s invitations elsewhere', async () => {
    h = await createDashboardHarness();
    const { browser: ownerA } = await h.signedIn();
    const { owner: ownerB } = await secondAccount(h);
    const toA = (await ownerA.post('members', { email: 'erin@example.org' })).json<Invitation>();
    const toB = (await ownerB.post('members', { email: 'erin@example.org' })).json<Invitation>();
    // B's owner uses the link shown to them, choosing Erin's password, and is signed in as Erin.
    const asErin = h.browser();
    const taken = await asErin.post('invitations/accept', {
      token: tokenOf(toB.link!),
      password: 'b owner chose this',
    });
    expect(taken.statusCode).toBe(200);
    asErin.csrf = taken.json<SessionView>().csrf_token;
    const joinA = await asErin.post('invitations/join', { token: tokenOf(toA.link!) });
    expect(joinA.statusCode).toBe(404);
    expect((await asErin.get('session')).json<SessionView>().memberships).toHaveLength(1);
  });
});

describe('switching accounts', () => {
  async function personInTwo(d: DashboardHarness) {
    await d.signedIn();
    const { owner: ownerB, accountId: accountB } = await secondAccount(d);
    // The owner of A is also a member of B (joined later: sign-in starts in the oldest).
    d.manualClock.advance(SECOND);
    await d.addMember('owner@example.org', { accountId: accountB });
    const b = d.browser();
    const first = await b.signIn('owner@example.org');
    return { b, ownerB, accountB, first };
  }

  it('confines every route to the current account: an id of A answers 404 while in B', async () => {
    h = await createDashboardHarness();
    const { b, accountB, first } = await personInTwo(h);
    expect(first.account!.id).toBe(h.accountId);
    expect(first.memberships).toHaveLength(2);
    const keyA = (await b.post('keys', { kind: 'live', name: 'in A', scopes: ['verify'] })).json<CreatedKey>()
      .key.id;

    const switched = await b.post('session/account', { account_id: accountB });
    expect(switched.statusCode).toBe(200);
    expect(switched.json<SessionView>()).toMatchObject({
      account: { id: accountB },
      member: { role: 'member' },
    });
    expect((await b.get('session')).json<SessionView>().account!.id).toBe(accountB);
    const revoke = await b.post(`keys/${keyA}/revoke`);
    expect(revoke.statusCode).toBe(404);
    expect((await b.get('keys')).json<{ keys: { id: string }[] }>().keys.map((k) => k.id)).not.toContain(
      keyA,
    );
    // As a member (not owner) of B: inviting is the owner's.
    expect((await b.post('members', { email: 'x@example.org' })).statusCode).toBe(403);

    expect((await b.post('session/account', { account_id: h.accountId })).statusCode).toBe(200);
    expect((await b.post(`keys/${keyA}/revoke`)).statusCode).toBe(200);
  });

  it('switches only to an account of the person’s (404 otherwise) and only with the CSRF token', async () => {
    h = await createDashboardHarness();
    const { b, accountB } = await personInTwo(h);
    const stranger = await h.createOtherAccount();
    const res = await b.post('session/account', { account_id: stranger.accountId });
    expect(res.statusCode).toBe(404);
    expect(errorCode(res)).toBe('not_found');
    expect((await b.post('session/account', { account_id: 'acc_unknown' })).statusCode).toBe(404);
    const noCsrf = await b.request('POST', 'session/account', {
      body: { account_id: accountB },
      noCsrf: true,
    });
    expect(noCsrf.statusCode).toBe(403);
    expect(errorCode(noCsrf)).toBe('csrf_rejected');
    expect((await b.get('session')).json<SessionView>().account!.id).toBe(h.accountId);
  });

  it('removing a membership keeps the person: their session moves to their other account', async () => {
    h = await createDashboardHarness();
    const { b, ownerB, accountB } = await personInTwo(h);
    await b.post('session/account', { account_id: accountB });
    const inB = (await ownerB.get('members')).json<{ members: { id: string; email: string }[] }>();
    const membership = inB.members.find((m) => m.email === 'owner@example.org')!;
    expect((await ownerB.request('DELETE', `members/${membership.id}`)).statusCode).toBe(204);

    const after = await b.get('session');
    expect(after.statusCode).toBe(200);
    expect(after.json<SessionView>().account!.id).toBe(h.accountId);
    expect(after.json<SessionView>().memberships.map((m) => m.account_id)).toEqual([h.accountId]);
    const people = await h.runtime.ctx.db
      .selectFrom('people')
      .select('email')
      .where('email', '=', 'owner@example.org')
      .execute();
    expect(people).toHaveLength(1);
    // B is no longer theirs to switch to.
    expect((await b.post('session/account', { account_id: accountB })).statusCode).toBe(404);
  });
});

describe('operators', () => {
  async function makeOperator(d: DashboardHarness, email: string) {
    const deps = {
      db: d.runtime.ctx.db,
      clock: d.clock,
      config: d.runtime.ctx.config,
      mailer: null,
      logger: { warn: () => undefined, info: () => undefined },
    };
    return addOperator(deps, email);
  }

  it('must enrol a second factor before anything else, and reaches the operator route then', async () => {
    h = await createDashboardHarness();
    const added = await makeOperator(h, 'ops@example.org');
    expect(added.added).toBe(true);
    expect(added.link).not.toBeNull();
    // The link sets the new operator's password; they belong to no account.
    const first = await h.browser().post('password-resets/accept', {
      token: added.link!.token,
      password: PASSWORD,
    });
    expect(first.statusCode).toBe(200);
    const ops = h.browser();
    const view = await ops.signIn('ops@example.org');
    expect(view).toMatchObject({ person: { operator: true }, account: null, member: null, memberships: [] });
    expect(view.two_factor).toEqual({ enabled: false, required: true });
    const early = await ops.get('session/operator');
    expect(early.statusCode).toBe(403);
    expect(errorCode(early)).toBe('two_factor_required');
    const secret = await enrol(h, ops);
    const whoami = await ops.get('session/operator');
    expect(whoami.statusCode).toBe(200);
    expect(whoami.json()).toMatchObject({ email: 'ops@example.org' });
    // No account: account-scoped routes are refused.
    expect((await ops.get('keys')).statusCode).toBe(403);

    // Two factors from now on: the password alone gives a challenge.
    h.manualClock.advance(30 * SECOND);
    const again = await h.browser().post('session', { email: 'ops@example.org', password: PASSWORD });
    expect(again.statusCode).toBe(202);
    expect(again.json<SecondFactorChallenge>().second_factor_required).toBe(true);
    void secret;
  });

  it('answers 404 to a member on the operator route, as for a route that does not exist', async () => {
    h = await createDashboardHarness();
    const { browser } = await h.signedIn();
    const res = await browser.get('session/operator');
    expect(res.statusCode).toBe(404);
    expect(errorCode(res)).toBe('not_found');
    const unknown = await browser.get('no-such-route');
    expect(res.json<{ error: string }>().error).toBe(unknown.json<{ error: string }>().error);
  });
});

describe('the sign_in audit entry', () => {
  it('is written once the second factor passes, not when the password does', async () => {
    h = await createDashboardHarness();
    const { browser } = await h.signedIn();
    const secret = await enrol(h, browser);
    h.manualClock.advance(30 * SECOND);
    const count = async () =>
      (await h!.runtime.ctx.db.selectFrom('audit_log').select('id').where('type', '=', 'sign_in').execute())
        .length;
    const before = await count();
    const b = h.browser();
    const step1 = await b.post('session', { email: 'owner@example.org', password: PASSWORD });
    expect(step1.statusCode).toBe(202);
    expect(await count()).toBe(before);
    const step2 = await b.post('session/second-factor', {
      challenge: step1.json<SecondFactorChallenge>().challenge,
      code: totpCode(secret, h.manualClock.now()),
    });
    expect(step2.statusCode).toBe(200);
    expect(await count()).toBe(before + 1);
  });
});
