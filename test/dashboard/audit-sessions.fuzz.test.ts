/**
 * The security log's and the sessions page's routes under random input (issue 16: "fuzzing
 * covers the new routes"): random queries, ids, methods and bodies, signed in as the owner, as a
 * member or not at all, never answer 5xx, always answer the envelope with a request id, never show
 * a member the log, and never end a session that is not the caller's own.
 */
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { SessionList } from '../../src/dashboard/contract.js';
import { createDashboardHarness, type Browser, type DashboardHarness } from '../kit/dashboard-kit.js';

const RUNS = Number(process.env.MAILVERDICT_FUZZ_RUNS ?? 150);

const text = fc.oneof(
  fc.string({ maxLength: 40 }),
  fc.constantFrom('sign_in', 'key_created', 'two_factor_reset', 'nonsense', '', '0', '-1', '999999'),
  fc.stringMatching(/^[A-Za-z0-9_:.-]{1,60}$/),
);
const query = fc.dictionary(fc.constantFrom('type', 'member', 'before', 'limit', 'x'), text, { maxKeys: 4 });
const body = fc.oneof(
  fc.constant(undefined),
  fc.dictionary(fc.string({ maxLength: 10 }), text, { maxKeys: 3 }),
);

describe('security log and sessions routes under random input', { timeout: 180_000 }, () => {
  let h: DashboardHarness;
  let owner: Browser;
  let member: Browser;
  let ownerSessionIds: string[];

  beforeAll(async () => {
    h = await createDashboardHarness({ flags: { signInRateLimit: '0', signInFailureLimit: '0' } });
    ({ browser: owner } = await h.signedIn());
    await h.addMember('mia@example.org');
    member = h.browser();
    await member.signIn('mia@example.org');
    ownerSessionIds = (await owner.get('/dashboard/api/sessions'))
      .json<SessionList>()
      .sessions.map((s) => s.id);
  }, 60_000);
  afterAll(async () => {
    await h?.close();
  });

  it('never answers 5xx, always the envelope, the log to the owner only, and ends no one else’s session', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.constantFrom('audit', 'audit.csv', 'sessions'),
        fc.constantFrom('GET', 'POST', 'DELETE'),
        query,
        fc.oneof(text, fc.constantFrom(...ownerSessionIds)),
        body,
        fc.constantFrom('owner', 'member', 'nobody'),
        async (path, method, q, id, payload, who) => {
          const b = who === 'owner' ? owner : who === 'member' ? member : h.browser();
          const target =
            method === 'DELETE' && path === 'sessions'
              ? // The owner's own sessions are only tried by others: ending one's own is allowed.
                `sessions/${encodeURIComponent(who === 'owner' ? `x${id}` : id)}`
              : `${path}?${new URLSearchParams(q).toString()}`;
          const res = await b.request(method, target, payload === undefined ? {} : { body: payload });
          expect(res.statusCode).toBeLessThan(500);
          expect(res.headers['x-request-id']).toMatch(/^req_/);
          if (res.statusCode >= 400 && path !== 'audit.csv')
            expect(res.json()).toMatchObject({ error: expect.any(String) });
          // A member never reads the log: refused (403), or the query is refused first (400/422).
          if (who === 'member' && path.startsWith('audit') && method === 'GET')
            expect([400, 403, 422]).toContain(res.statusCode);
        },
      ),
      { numRuns: RUNS },
    );
    // The member and nobody could not end the owner's sessions.
    expect((await owner.get('/dashboard/api/session')).statusCode).toBe(200);
  });
});
