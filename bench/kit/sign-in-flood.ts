/**
 * The attacker of bench/sign-in.bench.ts, in its own process (as it would be on its own
 * machine), so that its requests' JavaScript does not delay the owner's measured sign-ins in the
 * bench process's event loop. Takes a `FloodPlan` as JSON in argv[2]; sends `{ready: true}`, then
 * runs `concurrency` loops, each from one of `clients` in turn, sending its request again as soon
 * as the previous one answered, until the parent sends 'stop' (or `maxMs`, or 5,000 requests per
 * loop); then sends `{counts}`: the answers by status and error code, and exits.
 */
import { randomBytes } from 'node:crypto';
import { dashboardRequest, type Answer } from './dashboard-request.js';

export interface FloodPlan {
  base: string;
  clients: string[];
  concurrency: number;
  maxMs: number;
  /** links: unknown tokens to both accept routes; guesses: wrong passwords for `email`; session: GET /session. */
  kind: 'links' | 'guesses' | 'session';
  email?: string;
}

const plan = JSON.parse(process.argv[2]!) as FloodPlan;
const base = new URL(plan.base);

function request(from: string, i: number): Promise<Answer> {
  switch (plan.kind) {
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
    for (let i = 0; i < 5_000 && !stopped && performance.now() - started < plan.maxMs; i++) {
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
process.send?.({ counts, ms: performance.now() - started }, () => process.disconnect());
