import type { Counter } from 'prom-client';
import type { AppContext } from '../context.js';
import type { EgressStatus } from '../engine/egress/egress-guard.js';
import type { MemberMailer } from '../services/people/member-mail.js';
import type { PlanTable } from '../services/usage/plans.js';
import type { RateLimiter } from '../services/usage/rate-limit.js';
import type { UsageCache } from '../services/usage/usage-cache.js';

/**
 * What the dashboard is given by its composition (src/runtime.ts): the app context and the
 * collaborators it shares with the v1 API in the same process (one rate limiter, one usage cache,
 * one metrics registry), so that counts and limits are the same whichever edge a request came in.
 */
export interface DashboardOptions extends AppContext {
  plans: PlanTable;
  testDomain: string;
  rateLimiter: RateLimiter;
  usageCache: UsageCache;
  /** The verdict counter of the app's registry (mailverdict_verifications_total). */
  metrics: { verdicts: Counter<'status' | 'kind'> };
  /** Default: dist/web of this package. */
  webDir?: string;
  /** The e-mails of dashboard people, built by runtime.ts on the process's mailer; null: no relay. */
  memberMailer: MemberMailer | null;
  /** The operator console's collaborators (docs/operators.md). */
  operatorConsole?: OperatorConsoleOptions;
}

export interface OperatorConsoleOptions {
  /** The reputation guard's egresses (runtime.guard.statuses()); absent: the health panel has none. */
  egressStatuses?: () => readonly EgressStatus[];
}

/** What the dashboard's plugins are handed: its options with the defaults filled in. */
export interface DashboardDeps extends Omit<DashboardOptions, 'webDir' | 'memberMailer' | 'mailer'> {
  /** Where the built app (index.html, assets/) is. */
  webDir: string;
  /** Null: no SMTP relay, links are only shown. */
  mailer: MemberMailer | null;
  /** The session cookie's attributes, from the public base URL (security.ts). */
  cookie: { name: string; secure: boolean };
}
