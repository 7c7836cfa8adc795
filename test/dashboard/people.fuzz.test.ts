/**
 * The routes of people in several accounts under random input (issue 16: "fuzzing covers the new
 * routes"): switching accounts, joining with an invitation, its preview, and the operator route,
 * with random methods and bodies, signed in or not. They never answer 5xx, always answer the
 * envelope with a request id, never move a session into an account that is not its person's, and
 * never let a non-operator reach the operator route.
 */
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { SessionView } from '../../src/dashboard/contract.js';
import { createDashboardHarness, type Browser, type DashboardHarness } from '../kit/dashboard-kit.js';

const RUNS = Number(process.env.MAILVERDICT_FUZZ_RUNS ?? 150);
const PATHS = ['session/account', 'invitations/join', 'invitations/preview', 'session/operator', 'session'];

describe('people routes under random input', { timeout: 180_000 }, () => {
  let h: DashboardHarness;
  let signedIn: Browser;
  let accountB: string;
  let stranger: string;

  beforeAll(async () => {
    h = await createDashboardHarness({ flags: { signInRateLimit: '0', signInFailureLimit: '0' } });
    await h.signedIn();
    const other = await h.createOtherAccount();
    accountB = other.accountId;
    h.manualClock.advance(1000);
    await h.addMember('owner@example.org', { accountId: accountB });
    stranger = (await h.createOtherAccount()).accountId;
    signedIn = h.browser();
    await signedIn.signIn('owner@example.org');
  }, 60_000);
  afterAll(async () => {
    await h?.close();
  });

  it('never answers 5xx, always the envelope, and switches only to the person’s accounts', async () => {
    const accountId = fc.oneof(
      fc
        .constantFrom(
          () => h.accountId,
          () => accountB,
          () => stranger,
        )
        .map((f) => f()),
      fc.string({ maxLength: 120 }),
      fc.integer(),
      fc.constant(null),
    );
    const value = fc.oneof(fc.string({ maxLength: 300 }), fc.integer(), fc.boolean(), fc.constant(null));
    const body = fc.oneof(
      fc.constant(undefined),
      fc.record({ account_id: accountId, token: value }, { requiredKeys: [] }),
      fc.dictionary(fc.string({ maxLength: 12 }), value, { maxKeys: 4 }),
    );
    await fc.assert(
      fc.asyncProperty(
        fc.constantFrom(...PATHS),
        fc.constantFrom('GET', 'POST', 'PUT', 'DELETE'),
        body,
        fc.boolean(),
        async (path, method, payload, withSession) => {
          // Signing out is not what is fuzzed here: it would end the shared session.
          if (path === 'session' && method === 'DELETE') return;
          const b = withSession ? signedIn : h.browser();
          const res = await b.request(method, path, payload === undefined ? {} : { body: payload });
          expect(res.statusCode).toBeLessThan(500);
          expect(res.headers['x-request-id']).toMatch(/^req_/);
          if (res.statusCode >= 400) expect(res.json()).toMatchObject({ error: expect.any(String) });
          if (path === 'session/operator') expect(res.statusCode).not.toBe(200);
          if (!withSession) expect(b.cookie).toBeNull();
          if (withSession) {
            const now = (await signedIn.get('session')).json<SessionView>();
            expect([h.accountId, accountB]).toContain(now.account!.id);
          }
        },
      ),
      { numRuns: RUNS },
    );
  });
});
