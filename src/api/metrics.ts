/**
 * Prometheus metrics of one app, in its own registry (never prom-client's global one, so that
 * several apps in one process, as in tests, do not collide).
 */
import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';
import type { ResolverTrustStatus } from '../engine/dns/resolver-trust.js';
import type { SessionPoolStats } from '../engine/types.js';

export interface ApiMetrics {
  registry: Registry;
  httpRequests: Counter<'method' | 'route' | 'status'>;
  verdicts: Counter<'status' | 'kind'>;
  engineLatency: Histogram<'kind'>;
  quotaRefusals: Counter;
}

/** A fresh registry with the service's metrics; `processMetrics` adds Node's default ones. */
export function createMetrics(options: { processMetrics?: boolean } = {}): ApiMetrics {
  const registry = new Registry();
  if (options.processMetrics) collectDefaultMetrics({ register: registry, prefix: 'mailverdict_' });
  return {
    registry,
    httpRequests: new Counter({
      name: 'mailverdict_http_requests_total',
      help: 'HTTP requests by method, route pattern and status code.',
      labelNames: ['method', 'route', 'status'],
      registers: [registry],
    }),
    verdicts: new Counter({
      name: 'mailverdict_verifications_total',
      help: 'Single verifications answered, by verdict status and key kind.',
      labelNames: ['status', 'kind'],
      registers: [registry],
    }),
    engineLatency: new Histogram({
      name: 'mailverdict_engine_latency_seconds',
      help: 'Time the engine took for one verification, by key kind.',
      labelNames: ['kind'],
      buckets: [0.001, 0.005, 0.025, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
      registers: [registry],
    }),
    quotaRefusals: new Counter({
      name: 'mailverdict_quota_refusals_total',
      help: 'Requests refused with 429 quota_exceeded.',
      registers: [registry],
    }),
  };
}

/**
 * Hosts with their own series in `mailverdict_smtp_single_sessions_open`; the others are summed
 * under `host="other"`. The series are rebuilt at each scrape from the sessions open then, so the
 * label set is at most this many + 1 whatever the traffic (docs/api.md, "Metrics").
 */
export const SESSION_HOSTS_SHOWN = 20;

/**
 * The warm sessions of single verifications, read from `read()` at each scrape (once per
 * registry; nothing when the verifier keeps no sessions).
 */
export function registerSessionPoolMetrics(
  registry: Registry,
  read: () => SessionPoolStats | undefined,
): void {
  if (registry.getSingleMetric('mailverdict_smtp_single_sessions_open') !== undefined) return;
  new Gauge({
    name: 'mailverdict_smtp_single_sessions_open',
    help: `SMTP sessions of single verifications open now (idle or in use), per MX host address: the ${SESSION_HOSTS_SHOWN} with most sessions, the rest as host="other".`,
    labelNames: ['host'],
    registers: [registry],
    collect() {
      this.reset();
      const open = [...(read()?.openByHost ?? new Map<string, number>())].sort((a, b) => b[1] - a[1]);
      let other = 0;
      open.forEach(([host, n], i) => {
        if (i < SESSION_HOSTS_SHOWN) this.set({ host }, n);
        else other += n;
      });
      if (other > 0) this.set({ host: 'other' }, other);
    },
  });
  const counter = (name: string, help: string, value: (s: SessionPoolStats) => number): void => {
    new Counter({
      name,
      help,
      registers: [registry],
      collect() {
        const stats = read();
        this.reset();
        if (stats !== undefined) this.inc(value(stats));
      },
    });
  };
  counter(
    'mailverdict_smtp_single_sessions_opened_total',
    'SMTP sessions opened for single verifications.',
    (s) => s.opened,
  );
  counter(
    'mailverdict_smtp_single_sessions_reused_total',
    'Single verifications carried by an SMTP session already open (warm).',
    (s) => s.reused,
  );
  counter(
    'mailverdict_smtp_single_sessions_adopted_total',
    'Batch SMTP sessions kept idle in the session broker for single verifications (their host had no batch work left) instead of being closed.',
    (s) => s.adopted ?? 0,
  );
  counter(
    'mailverdict_smtp_single_sessions_closed_by_server_total',
    'SMTP sessions of single verifications that the mail server closed (idle timeout, shutdown) before we did.',
    (s) => s.closedByServer,
  );
  new Gauge({
    name: 'mailverdict_smtp_single_session_reuse_ratio',
    help: 'Verifications on a warm session / all verifications that needed a session, since the start (reused / (reused + opened)).',
    registers: [registry],
    collect() {
      const stats = read();
      const all = stats === undefined ? 0 : stats.reused + stats.opened;
      this.set(all === 0 ? 0 : stats!.reused / all);
    },
  });
}

/**
 * Whether the DNS resolver tells the truth (engine/dns/resolver-trust.ts), read at each scrape:
 * `mailverdict_dns_resolver_trusted` is 1 while trusted (or the checks are off), 0 while it is
 * untrusted, unreachable or not checked yet. Once per registry.
 */
export function registerDnsTrustMetrics(registry: Registry, read: () => ResolverTrustStatus): void {
  if (registry.getSingleMetric('mailverdict_dns_resolver_trusted') !== undefined) return;
  new Gauge({
    name: 'mailverdict_dns_resolver_trusted',
    help: 'Whether the DNS resolver is trusted (1; also with the checks off) or not (0: untrusted, unreachable or not checked yet). While it is not, NXDOMAIN and "no mail host" answers become unknown / dns_error and batches keep those addresses pending.',
    registers: [registry],
    collect() {
      const { state } = read();
      this.set(state === 'trusted' || state === 'off' ? 1 : 0);
    },
  });
}
