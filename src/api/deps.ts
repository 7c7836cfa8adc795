import type { AppContext } from '../context.js';
import type { KeyCache } from '../services/keys/key-cache.js';
import type { AuthenticatedKey } from '../services/keys/keys.service.js';
import type { PlanTable } from '../services/usage/plans.js';
import type { UsageCache } from '../services/usage/usage-cache.js';
import type { ApiMetrics } from './metrics.js';
import type { RateLimiter } from '../services/usage/rate-limit.js';
import type { SnsFetch } from '../services/outcomes/esp/sns.js';

/** What route plugins are handed: the app context plus the API's own collaborators. */
export interface ApiDeps extends AppContext {
  plans: PlanTable;
  rateLimiter: RateLimiter;
  metrics: ApiMetrics;
  testDomain: string;
  keyCache: KeyCache<AuthenticatedKey>;
  /** Usage reads, emptied by this process's counts (services/usage/usage-cache.ts). */
  usageCache: UsageCache;
  /** What /readyz asks besides the store, by name (e.g. redis); each rejects when unreachable. */
  readinessChecks: Readonly<Record<string, () => Promise<unknown>>>;
  /** Gets SNS signing certificates and confirms SNS subscriptions (SES outcome sources). */
  snsFetch: SnsFetch;
}
