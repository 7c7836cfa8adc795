/**
 * The per-MX-host session cap held by many worker processes together: four real `worker`
 * processes sharing their politeness slots through Redis verify one live job against an
 * in-process MTA (test/kit/pipelining-mta.ts) that counts the sessions open at once.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startFakeMta, type FakeMta } from '../kit/pipelining-mta.js';
import { startDnsServer, TRUST_ANCHOR_ENV, withTrustAnchor, type FakeDnsServer } from '../kit/dns-server.js';
import { api, scaleServices, skipWithoutServices, waitFor, type ScaleServices } from './scale-kit.js';

const SUITE = 'scale-out: 4 worker processes sharing one MX host through Redis';
const MX_HOST = '127.0.6.1';
const PER_HOST_CAP = 2;
const DOMAINS = Array.from({ length: 8 }, (_, i) => `d${i}.scale.test`);

describe.skipIf(skipWithoutServices(SUITE))(SUITE, () => {
  let s: ScaleServices;
  let dns: FakeDnsServer;
  let mta: FakeMta;
  let apiUrl: string;

  beforeAll(async () => {
    s = await scaleServices();
    // 10 ms per reply: each session lasts long enough for the other workers to want one too.
    mta = await startFakeMta({
      hosts: [MX_HOST],
      latencyMs: 10,
      record: true,
      rcpt: (address) => (address.startsWith('user') ? '250 2.1.5 OK' : `550 5.1.1 <${address}>: unknown`),
    });
    dns = withTrustAnchor(await startDnsServer());
    dns.setDomain('mx.scale.test', { a: [MX_HOST] });
    for (const domain of DOMAINS)
      dns.setDomain(domain, { mx: [{ exchange: 'mx.scale.test', priority: 10 }] });
    const probing = {
      MAILVERDICT_DNS_SERVERS: dns.address,
      ...TRUST_ANCHOR_ENV,
      MAILVERDICT_SMTP_PORT: String(mta.port),
      MAILVERDICT_ALLOW_INTERNAL_TARGETS: 'true',
      MAILVERDICT_PER_HOST_CONCURRENCY: String(PER_HOST_CAP),
      MAILVERDICT_CHUNK_SIZE: '10',
      MAILVERDICT_CHUNK_CONCURRENCY: '4',
      MAILVERDICT_WORKER_POLL_INTERVAL: '200ms',
    };
    const [api] = await Promise.all([
      s.startApi(probing),
      // Each worker greets with its own name, so the MTA's log tells whose each session was.
      ...[1, 2, 3, 4].map((n) =>
        s.startWorker({ ...probing, MAILVERDICT_HELO_NAME: `worker${n}.scale.test` }),
      ),
    ]);
    apiUrl = api.url;
  }, 90_000);

  afterAll(async () => {
    await s?.close();
    await dns?.close();
    await mta?.close();
  }, 30_000);

  it(`opens at most ${PER_HOST_CAP} sessions at once to one MX host from four workers, and gives each address one row`, async () => {
    const account = await s.account({ email: 'polite@example.com' });
    const emails = Array.from({ length: 300 }, (_, i) => `user${i}@${DOMAINS[i % DOMAINS.length]}`);
    const submit = await api(`${apiUrl}/v1/verify/batch`, account.liveKey, { emails, notify_email: false });
    expect(submit.status).toBe(202);
    const { job_id: jobId } = (await submit.json()) as { job_id: string };

    const job = await waitFor(
      'the live job completing',
      async () => {
        const body = (await (await api(`${apiUrl}/v1/jobs/${jobId}`, account.liveKey)).json()) as {
          status: string;
          processed: number;
        };
        return body.status === 'completed' || body.status === 'failed' ? body : undefined;
      },
      45_000,
      250,
    );
    expect(job).toMatchObject({ status: 'completed', processed: emails.length });

    const stats = mta.stats();
    expect(stats.connections).toBeGreaterThan(1);
    expect(stats.peakConcurrentByHost[MX_HOST]).toBeLessThanOrEqual(PER_HOST_CAP);

    const { results } = (await (
      await api(`${apiUrl}/v1/jobs/${jobId}/results?format=json`, account.liveKey)
    ).json()) as { results: { index: number; email: string; status: string }[] };
    expect(results.map((r) => r.index)).toEqual(emails.map((_, i) => i));
    expect(results.map((r) => r.email)).toEqual(emails);
    expect(results.filter((r) => r.status !== 'deliverable')).toEqual([]);
    // The workers shared the host: the cap was held by several of them together, not by one alone.
    const greeters = new Set(
      stats.sessions.map((session) => /^EHLO (worker\d)/i.exec(session.commands[0] ?? '')?.[1]),
    );
    expect(greeters.size).toBeGreaterThanOrEqual(3);
  }, 60_000);
});
