/**
 * Issue 7, fault injection: the DNS server vanishes in the middle of a live batch job, after some
 * domains have answered. The job must still complete with one row per address; rows already
 * stored stay as they were; every address whose lookup failed is unknown / dns_error (a DNS
 * failure is never proof that a domain is bad), and nothing is probed at an address DNS did not
 * give. Real components: the jobs harness on a SQLite file, the in-process DNS server, a
 * loopback MTA, the batch engine, the worker's deterministic `runOnce()`.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { startSmtpServers, type SmtpKit } from '../kit/smtp-servers.js';
import type { ResultsJson } from '../kit/jobs-kit.js';
import { createLiveJobs, type LiveJobs } from './live-jobs.js';

const DOMAINS = ['d0', 'd1', 'd2', 'd3', 'd4', 'd5', 'd6'].map((d) => `${d}.test`);
/** Four chunks of ten; the domains of each chunk, alternating address by address. */
const CHUNK_DOMAINS = [
  ['d0.test', 'd1.test'],
  ['d2.test', 'd3.test'],
  ['d4.test', 'd5.test'],
  ['d0.test', 'd6.test'],
];
const emails = CHUNK_DOMAINS.flatMap((pair, chunk) =>
  Array.from({ length: 10 }, (_, i) => `user${chunk * 10 + i}@${pair[i % 2]}`),
);

let kit: SmtpKit;
let live: LiveJobs;

beforeEach(async () => {
  kit = await startSmtpServers({
    acme: { kind: 'mta', mailboxes: Array.from({ length: 40 }, (_, i) => `user${i}`) },
  });
  live = await createLiveJobs({
    // A lookup the vanished server never answers gives up after 500 ms.
    flags: { chunkSize: '10', smtpPort: String(kit.port), dnsTimeout: '500ms', dnsTries: '1' },
    account: { plan: 'starter' },
  });
  for (const domain of DOMAINS)
    live.h.dns.setDomain(domain, { mx: [{ exchange: 'mx.acme.test', priority: 10 }] });
  live.h.dns.setDomain('mx.acme.test', { a: [kit.hosts.acme!.ip] });
});
afterEach(async () => {
  await live.close();
  await kit.close();
});

async function storedResults(jobId: string, seq: number): Promise<string | null> {
  const row = await live.h.runtime.ctx.db
    .selectFrom('job_chunks')
    .select('results')
    .where('job_id', '=', jobId)
    .where('seq', '=', seq)
    .executeTakeFirstOrThrow();
  return row.results;
}

describe('the DNS server vanishing mid-batch', () => {
  it('completes the job: earlier rows kept, failed lookups unknown / dns_error, one row per address', async () => {
    const { h } = live;
    const submitted = await h.submit(h.liveKey, { emails, notify_email: false });
    expect(submitted.statusCode).toBe(202);
    const jobId = submitted.json<{ job_id: string }>().job_id;

    // Chunk 0 while DNS answers.
    expect(await h.worker.runOnce()).toBe(true);
    const firstChunk = await storedResults(jobId, 0);
    expect(firstChunk).not.toBeNull();

    // Chunk 1: its questions reach the server, which goes away before answering them.
    h.dns.setDelay(60_000);
    const inFlight = h.worker.runOnce();
    // Bounded by a deadline inside the test's time, not by a count of short sleeps.
    for (
      const until = Date.now() + 30_000;
      !['d2.test', 'd3.test'].every((d) => h.dns.queryCount(d, 'MX') > 0) && Date.now() < until;
    )
      await sleep(20);
    expect(h.dns.queryCount('d2.test', 'MX')).toBe(1);
    expect(h.dns.queryCount('d3.test', 'MX')).toBe(1);
    await live.stopDns();
    expect(await inFlight).toBe(true);

    // Chunks 2 and 3 with nothing listening on the DNS port any more.
    // Refused at once or timed out after 500 ms per lookup: never a hang (a hang would be the
    // test's own timeout; no measured duration is compared).
    expect(await h.drain()).toBe(2);

    const job = (await h.job(h.liveKey, jobId)).json();
    expect(job).toMatchObject({ status: 'completed', total: 40, processed: 40, invalid: 0 });
    expect(await storedResults(jobId, 0)).toBe(firstChunk);

    const rows = (await h.results(h.liveKey, jobId, 'json')).json<ResultsJson>().results;
    expect(rows.map((r) => r.index)).toEqual(emails.map((_, i) => i));
    expect(rows.map((r) => r.email)).toEqual(emails);
    const byDomain = (domain: string) => rows.filter((r) => r.email.endsWith(`@${domain}`));
    // Answered before the server went: verified, and d0 again from the resolver's cache later on.
    for (const domain of ['d0.test', 'd1.test'])
      for (const row of byDomain(domain)) expect(row).toMatchObject({ status: 'deliverable', reason: null });
    expect(byDomain('d0.test')).toHaveLength(10);
    // Asked while or after it vanished: could not be found out.
    for (const domain of ['d2.test', 'd3.test', 'd4.test', 'd5.test', 'd6.test']) {
      expect(byDomain(domain)).toHaveLength(5);
      for (const row of byDomain(domain))
        expect(row).toMatchObject({ status: 'unknown', reason: 'dns_error' });
    }
    expect(rows.filter((r) => r.status === 'undeliverable')).toEqual([]);
    // Nothing was probed at a domain DNS did not answer for.
    const rcpts = kit.hosts.acme!.commands.filter((c) => /^RCPT TO:/i.test(c));
    expect(rcpts.filter((c) => !/@d[01]\.test>/i.test(c))).toEqual([]);

    // A single verification meanwhile answers the same way, with the DNS error as evidence.
    const single = await h.verify(h.liveKey, { email: 'someone@d5.test', include_checks: true });
    expect(single.statusCode).toBe(200);
    expect(single.json()).toMatchObject({
      status: 'unknown',
      reason: 'dns_error',
      // Refused by the kernel (ICMP port unreachable) or, where that is filtered, a time-out.
      checks: { mx: { passed: null, error: expect.stringMatching(/^(CONNREFUSED|TIMEOUT)$/) } },
    });
  });
});
