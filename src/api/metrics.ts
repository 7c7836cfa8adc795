/**
 * Prometheus metrics of one app, in its own registry (never prom-client's global one, so that
 * several apps in one process, as in tests, do not collide).
 */
import { Counter, Histogram, Registry, collectDefaultMetrics } from 'prom-client';

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
