/**
 * What services, routes and workers are handed. Built once at the edge (serve, worker, tests);
 * nothing below reads globals.
 */
import type { Kysely } from 'kysely';
import type { Logger } from 'pino';
import type { Clock } from './clock.js';
import type { Config } from './config.js';
import type { ResolverTrust } from './engine/dns/resolver-trust.js';
import type { SessionBroker } from './engine/sessions/broker.js';
import type { Verifier } from './engine/types.js';
import type { Mailer } from './services/mailer.js';
import type { ResultCache } from './services/verify/result-cache.js';
import type { VerdictLog } from './services/outcomes/verdict-log.js';
import type { Database } from './store/schema.js';

export interface AppContext {
  config: Readonly<Config>;
  db: Kysely<Database>;
  clock: Clock;
  logger: Logger;
  verifier: Verifier;
  /**
   * Whether the engine's DNS resolver tells the truth (engine/dns/resolver-trust.ts): /readyz,
   * /metrics, the operator console and the dashboard's banner read it.
   */
  dnsTrust: ResolverTrust;
  /**
   * The process's session broker (engine/sessions/broker.ts), asked by its single verifications
   * (`verifier`) and its batch engine alike: one per-host and per-provider cap, and the idle
   * sessions of both; runtime.ts's startEmbeddedWorkers builds the batch engine with it. Absent (a verifier passed
   * in): the batch engine's caps are its own.
   */
  sessionBroker?: SessionBroker;
  /**
   * Live results given again without a probe, shared by the API and the batch jobs of the process
   * (and, through Redis, of every process). createRuntime builds it from the settings; absent: no cache.
   */
  resultCache?: ResultCache;
  /**
   * The process's one mailer to the SMTP relay (services/mailer.ts), built and closed by
   * createRuntime; absent or null: no relay, and no e-mail is sent.
   */
  mailer?: Mailer | null;
  /** The latest verdict per (account, address), for the accuracy report (services/outcomes/verdict-log.ts). */
  verdictLog: VerdictLog;
}
