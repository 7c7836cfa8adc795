/**
 * The attacker of bench/sign-in.bench.ts, in its own process (as it would be on its own
 * machine), so that its requests' JavaScript does not delay the owner's measured sign-ins in the
 * bench process's event loop. Takes a `FloodPlan` as JSON in argv[2]; sends `{ready: true}`, then
 * runs `concurrency` loops, each from one of `clients` in turn, sending its request again as soon
 * as the previous one answered, until the parent sends 'stop' (or `maxMs`, or 5,000 requests per
 * loop); then sends `{counts, ms, solvingMs}`: the answers by status and error code, how long it
 * ran, the time spent solving proofs of work, and exits.
 */
import { randomBytes } from 'node:crypto';
import { solveChallenge, type Challenge } from 'altcha-lib';
import { deriveKey } from 'altcha-lib/algorithms/sha';
import { dashboardRequest, type Answer } from './dashboard-request.js';

export interface FloodPlan {
  base: string;
  clients: string[];
  concurrency: number;
  maxMs: number;
  /**
   * links: unknown tokens to both accept routes; guesses: wrong passwords for `email`;
   * guesses-pow: the same, solving the proof of work whenever it is asked for (428), until the
   * pair's budget is spent (429 for its failed sign-ins); session: GET /session.
   */
  kind: 'links' | 'guesses' | 'guesses-pow' | 'session';
  email?: string;
}

const plan = JSON.parse(process.argv[2]!) as FloodPlan;
const base = new URL(plan.base);

/** Per client address: the solved challenge its next guess carries (guesses-pow). */
const solvedFor = new Map<string, string>();
/** Client addresses whose pair budget is spent (guesses-pow). */
const spent = new Set<string>();
let solving = 0;

async function guessWithWork(from: string, i: number): Promise<Answer> {
  const altcha = solvedFor.get(from);
  solvedFor.delete(from);
  const answer = await dashboardRequest(base, from, 'POST', 'session', {
    body: { email: plan.email, password: `wrong guess ${i}`, ...(altcha === undefined ? {} : { altcha }) },
  });
  if (answer.status === 429 && answer.body.includes('failed sign-ins')) spent.add(from);
  if (answer.status === 428) {
    const res = await dashboardRequest(base, from, 'GET', 'session/challenge');
    const challenge = JSON.parse(res.body) as Challenge;
    const at = performance.now();
    const solution = await solveChallenge({ challenge, deriveKey, timeout: 30_000 });
    solving += performance.now() - at;
    if (solution !== null)
      solvedFor.set(from, Buffer.from(JSON.stringify({ challenge, solution })).toString('base64'));
  }
  return answer;
}

function request(from: string, i: number): Promise<Answer> {
  switch (plan.kind) {
    case 'guesses-pow':
      return guessWithWork(from, i);
    case 'links':
      return dashboardRequest(
        base,
        from,
        'POST',
        i % 2 === 0 ? 'invitations/accept' : 'password-resets/accept',
        {
          body: {
            token: randomBytes(32).toString('base64url'),
            password: 'a bogus password for a bogus link',
          },
        },
      );
    case 'guesses':
      return dashboardRequest(base, from, 'POST', 'session', {
        body: { email: plan.email, password: `wrong guess ${i}` },
      });
    case 'session':
      return dashboardRequest(base, from, 'GET', 'session');
  }
}

const counts: Record<string, number> = {};
let stopped = false;
const started = performance.now();
process.on('message', (message: unknown) => {
  if (message === 'stop') stopped = true;
});
process.send?.({ ready: true });
await Promise.all(
  Array.from({ length: plan.concurrency }, async (_, loop) => {
    const from = plan.clients[loop % plan.clients.length]!;
    for (
      let i = 0;
      i < 5_000 && !stopped && !spent.has(from) && performance.now() - started < plan.maxMs;
      i++
    ) {
      let key: string;
      try {
        const answer = await request(from, loop * 5_000 + i);
        let code = '';
        try {
          code = (JSON.parse(answer.body) as { error?: string }).error ?? '';
        } catch {
          // Not JSON: counted by its status alone.
        }
        key = code === '' ? String(answer.status) : `${answer.status} ${code}`;
      } catch (err) {
        key = `error ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`;
      }
      counts[key] = (counts[key] ?? 0) + 1;
    }
  }),
);
process.send?.({ counts, ms: performance.now() - started, solvingMs: solving }, () => process.disconnect());
