/**
 * Issue 7, job metrics: /metrics shows jobs by state, chunks queued / leased / expired, addresses
 * verified, deliveries by outcome and SMTP sessions open per MX host.
 */
import { Registry } from 'prom-client';
import { afterEach, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config.js';
import { createBatchEngine } from '../../src/engine/batch/batch-engine.js';
import { createJobMetrics } from '../../src/jobs/job-metrics.js';
import { startFakeMta } from '../kit/pipelining-mta.js';
import { startDnsServer, TRUST_ANCHOR_FLAGS, withTrustAnchor } from '../kit/dns-server.js';
import { createJobsHarness, fixtureEmails, harnessWorker, type JobsHarness } from '../kit/jobs-kit.js';

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

async function value(
  registry: Registry,
  name: string,
  labels: Record<string, string> = {},
): Promise<number | undefined> {
  const metric = (await registry.getMetricsAsJSON()).find((m) => m.name === name);
  const sample = metric?.values.find((v) => Object.entries(labels).every(([k, l]) => v.labels[k] === l));
  return sample?.value;
}

describe('job metrics', () => {
  it('count jobs, chunks, verified addresses and deliveries from the store and the worker', async () => {
    const h: JobsHarness = await createJobsHarness({
      flags: { chunkSize: '10' },
      account: { plan: 'starter' },
    });
    cleanups.push(() => h.close());
    const registry = new Registry();
    const metrics = createJobMetrics(registry, h.runtime.ctx.db, h.clock);
    const worker = harnessWorker(h, { metrics });
    cleanups.push(() => worker.stop());

    expect((await h.submit(h.testKey, { emails: fixtureEmails(25) })).statusCode).toBe(202);
    expect(await value(registry, 'mailverdict_jobs', { status: 'queued' })).toBe(1);
    expect(await value(registry, 'mailverdict_job_chunks', { state: 'queued' })).toBe(3);

    expect(await worker.runOnce()).toBe(true);
    expect(await value(registry, 'mailverdict_batch_addresses_verified_total')).toBe(10);
    expect(await value(registry, 'mailverdict_jobs', { status: 'processing' })).toBe(1);
    expect(await value(registry, 'mailverdict_job_chunks', { state: 'queued' })).toBe(2);

    while (await worker.runOnce());
    expect(await value(registry, 'mailverdict_batch_addresses_verified_total')).toBe(25);
    expect(await value(registry, 'mailverdict_jobs', { status: 'completed' })).toBe(1);
    expect(await value(registry, 'mailverdict_job_chunks', { state: 'queued' })).toBe(0);
    // notify_email defaults to true: the completion e-mail waits in the outbox.
    expect(await value(registry, 'mailverdict_job_deliveries', { channel: 'email', state: 'pending' })).toBe(
      1,
    );
  });

  it('show the SMTP sessions the batch engine holds open per MX host, and drop a host once closed', async () => {
    const mta = await startFakeMta({ hosts: ['127.0.3.41'], rcpt: () => '250 2.1.5 OK', latencyMs: 20 });
    const dns = withTrustAnchor(await startDnsServer());
    cleanups.push(
      () => mta.close(),
      () => dns.close(),
    );
    dns.setDomain('mx.metrics.test', { a: ['127.0.3.41'] });
    dns.setDomain('metrics.test', { mx: [{ exchange: 'mx.metrics.test', priority: 10 }] });
    const config = loadConfig(
      {
        dnsServer: dns.address,
        ...TRUST_ANCHOR_FLAGS,
        smtpPort: String(mta.port),
        allowInternalTargets: 'true',
      },
      {},
    );
    const registry = new Registry();
    const h = await createJobsHarness();
    cleanups.push(() => h.close());
    const metrics = createJobMetrics(registry, h.runtime.ctx.db, h.clock);
    let peak = 0;
    const observer = {
      ...metrics.engineObserver,
      onSessionOpen(host: string, egress: string) {
        metrics.engineObserver.onSessionOpen?.(host, egress);
        void value(registry, 'mailverdict_smtp_sessions_open', { host }).then(
          (v) => (peak = Math.max(peak, v ?? 0)),
        );
      },
    };
    const engine = createBatchEngine(
      {
        ...config.engine,
        concurrency: 10,
        perHostConcurrency: 3,
        greylistRetries: 0,
        greylistDelayMs: 10,
        timeoutMs: 3000,
      },
      { observer },
    );
    cleanups.push(() => engine.close());
    const results = await engine.verifyMany(Array.from({ length: 300 }, (_, i) => `user${i}@metrics.test`));
    expect(results.every((r) => r.status === 'deliverable' || r.reason === 'catch_all')).toBe(true);
    expect(peak).toBeGreaterThanOrEqual(1);
    expect(peak).toBeLessThanOrEqual(3);
    expect(peak).toBe(mta.stats().peakConcurrentByHost['127.0.3.41']);
    await engine.close();
    expect(await value(registry, 'mailverdict_smtp_sessions_open', { host: '127.0.3.41' })).toBeUndefined();
  });
});
