/**
 * The two-factor routes under random input (issue 16: "fuzzing covers the new routes"): random
 * methods, bodies and codes, signed in or not, never answer 5xx, always answer the envelope with
 * a request id, and never open a session without a valid code.
 */
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { SecondFactorChallenge, TwoFactorEnrolment } from '../../src/dashboard/contract.js';
import { totpCode } from '../../src/services/people/two-factor.service.js';
import {
  createDashboardHarness,
  PASSWORD,
  type Browser,
  type DashboardHarness,
} from '../kit/dashboard-kit.js';

const RUNS = Number(process.env.MAILVERDICT_FUZZ_RUNS ?? 150);
const PATHS = [
  'session/second-factor',
  'account/two-factor',
  'account/two-factor/enrolment',
  'account/two-factor/enrolment/confirm',
  'account/two-factor/disable',
  'account/two-factor/requirement',
];

const value = fc.oneof(
  fc.string({ maxLength: 80 }),
  fc.stringMatching(/^\d{6}$/),
  fc.integer(),
  fc.boolean(),
  fc.constant(null),
  fc.array(fc.string({ maxLength: 8 }), { maxLength: 3 }),
);
const body = fc.oneof(
  fc.constant(undefined),
  fc.record({ challenge: value, code: value, password: value, required: value }, { requiredKeys: [] }),
  fc.dictionary(fc.string({ maxLength: 12 }), value, { maxKeys: 4 }),
);

describe('two-factor routes under random input', { timeout: 180_000 }, () => {
  let h: DashboardHarness;
  let signedIn: Browser;
  let challenge: string;

  beforeAll(async () => {
    h = await createDashboardHarness({ flags: { signInRateLimit: '0', signInFailureLimit: '0' } });
    ({ browser: signedIn } = await h.signedIn());
    await h.addMember('tess@example.org');
    // Tess has two factors: her password earns a challenge the fuzzer may send back.
    const tess = h.browser();
    await tess.signIn('tess@example.org');
    // The secret as the page shows it (the store keeps it sealed: docs/security.md).
    const { secret } = (await tess.post('account/two-factor/enrolment')).json<TwoFactorEnrolment>();
    await tess.post('account/two-factor/enrolment/confirm', {
      code: totpCode(secret, h.manualClock.now()),
      password: PASSWORD,
    });
    const first = await h.browser().post('session', { email: 'tess@example.org', password: PASSWORD });
    challenge = first.json<SecondFactorChallenge>().challenge;
  }, 60_000);
  afterAll(async () => {
    await h?.close();
  });

  it('never answers 5xx, always the envelope, and opens no session without a valid code', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.constantFrom(...PATHS),
        fc.constantFrom('GET', 'POST', 'PUT', 'DELETE'),
        body,
        fc.boolean(),
        fc.boolean(),
        async (path, method, payload, withSession, realChallenge) => {
          const b = withSession ? signedIn : h.browser();
          const sent =
            realChallenge && payload !== undefined && path === 'session/second-factor'
              ? { ...payload, challenge }
              : payload;
          const res = await b.request(method, path, sent === undefined ? {} : { body: sent });
          expect(res.statusCode).toBeLessThan(500);
          expect(res.headers['x-request-id']).toMatch(/^req_/);
          if (res.statusCode >= 400) expect(res.json()).toMatchObject({ error: expect.any(String) });
          if (!withSession) expect(b.cookie).toBeNull();
        },
      ),
      { numRuns: RUNS },
    );
  });
});
