/**
 * Issue 7, fault injection: an MX host that accepts every connection and drops it at once (a TCP
 * reset, or a plain close), never saying a word. A single verification and a live batch job both
 * end with unknown / smtp_unavailable in bounded time: the single probe asks once, the batch
 * engine gives the host up after `maxHostFailures` sessions spaced by its back-off
 * (docs/batch-engine.md), and addresses at healthy hosts in the same job are not held back.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { BATCH_DEFAULTS } from '../../src/engine/batch/batch-engine.js';
import { startSmtpServers, type SmtpKit } from '../kit/smtp-servers.js';
import type { ResultsJson } from '../kit/jobs-kit.js';
import { createLiveJobs, type LiveJobs } from './live-jobs.js';
import { startResettingHost, type DropMode, type ResettingHost } from './resetting-host.js';

/** Away from the kit's 127.0.0.x hosts; every MX host of the test listens on the kit's port. */
const RESET_IP = '127.0.6.1';

let kit: SmtpKit;
let reset: ResettingHost;
let live: LiveJobs;
const cleanups: (() => Promise<void>)[] = [];

afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

async function startHosts(mode: DropMode): Promise<void> {
  const mailboxes = Array.from({ length: 30 }, (_, i) => `ok${i}`);
  for (let attempt = 0; ; attempt++) {
    kit = await startSmtpServers({ ok: { kind: 'mta', mailboxes } });
    try {
      reset = await startResettingHost(RESET_IP, kit.port, mode);
      cleanups.push(
        () => kit.close(),
        () => reset.close(),
      );
      return;
    } catch (error) {
      await kit.close();
      if ((error as NodeJS.ErrnoException).code !== 'EADDRINUSE' || attempt >= 5) throw error;
    }
  }
}

describe.each(['rst', 'fin'] as const)('an MX host that drops every connection at once (%s)', (mode) => {
  beforeEach(async () => {
    await startHosts(mode);
    live = await createLiveJobs({
      flags: { chunkSize: '50', smtpPort: String(kit.port) },
      account: { plan: 'starter' },
    });
    cleanups.push(() => live.close());
    const { dns } = live.h;
    dns.setDomain('reset.test', { mx: [{ exchange: 'mx.reset.test', priority: 10 }] });
    dns.setDomain('mx.reset.test', { a: [RESET_IP] });
    dns.setDomain('ok.test', { mx: [{ exchange: 'mx.ok.test', priority: 10 }] });
    dns.setDomain('mx.ok.test', { a: [kit.hosts.ok!.ip] });
  });

  it('answers a single verification unknown / smtp_unavailable after one connection', async () => {
    const res = await live.h.verify(live.h.liveKey, { email: 'anna@reset.test', include_checks: true });
    expect(res.statusCode).toBe(200);
    expect(res.json()).toMatchObject({
      status: 'unknown',
      reason: 'smtp_unavailable',
      checks: { smtp: { passed: null, host: 'mx.reset.test', code: null } },
    });
    expect(reset.acceptedAt).toHaveLength(1);
  });

  it('completes a batch job: the host given up after its back-off, healthy hosts verified', async () => {
    const { h } = live;
    // Interleaved, one chunk: 20 addresses at the dropping host, 10 at a healthy one.
    const emails = Array.from({ length: 30 }, (_, i) =>
      i % 3 === 2 ? `ok${i}@ok.test` : `user${i}@reset.test`,
    );
    const submitted = await h.submit(h.liveKey, { emails, notify_email: false });
    expect(submitted.statusCode).toBe(202);
    const jobId = submitted.json<{ job_id: string }>().job_id;

    expect(await h.drain()).toBe(1);
    const { hostBackoffMs, maxHostFailures } = BATCH_DEFAULTS;

    expect((await h.job(h.liveKey, jobId)).json()).toMatchObject({
      status: 'completed',
      total: 30,
      processed: 30,
      invalid: 0,
    });
    const rows = (await h.results(h.liveKey, jobId, 'json')).json<ResultsJson>().results;
    expect(rows.map((r) => r.index)).toEqual(emails.map((_, i) => i));
    expect(rows.map((r) => r.email)).toEqual(emails);
    for (const row of rows) {
      if (row.email.endsWith('@reset.test'))
        expect(row).toMatchObject({ status: 'unknown', reason: 'smtp_unavailable' });
      else expect(row).toMatchObject({ status: 'deliverable', reason: null });
    }

    // maxHostFailures sessions, each after the back-off of the failure before (1 s, then 2 s).
    expect(reset.acceptedAt).toHaveLength(maxHostFailures);
    for (let i = 1; i < maxHostFailures; i++) {
      const gap = reset.acceptedAt[i]! - reset.acceptedAt[i - 1]!;
      // 50 ms of slack: the back-off runs on Date.now(), the host stamps with performance.now().
      expect(gap).toBeGreaterThanOrEqual(hostBackoffMs * 2 ** (i - 1) - 50);
    }
    // Given up once, for every address queued there (and the domain's catch-all probe).
    expect(live.warnings.filter((w) => w.host === 'mx.reset.test')).toEqual([
      expect.objectContaining({ address: RESET_IP, failure: 'unavailable', addresses: 21 }),
    ]);
  });
  it('answers a later job at a host just given up at once, without a new connection', async () => {
    const { h } = live;
    const job = async (prefix: string): Promise<string> => {
      const emails = Array.from({ length: 10 }, (_, i) => `${prefix}${i}@reset.test`);
      const submitted = await h.submit(h.liveKey, { emails, notify_email: false });
      expect(await h.drain()).toBe(1);
      return submitted.json<{ job_id: string }>().job_id;
    };
    await job('first');
    const connectionsBefore = reset.acceptedAt.length;
    expect(connectionsBefore).toBe(BATCH_DEFAULTS.maxHostFailures);
    const later = await job('later');
    // The host is still inside the back-off of its last failure (4 s after three): before the
    // fix each later chunk waited that out and then knocked once more.
    expect(reset.acceptedAt).toHaveLength(connectionsBefore);
    const rows = (await h.results(h.liveKey, later, 'json')).json<ResultsJson>().results;
    expect(rows).toHaveLength(10);
    for (const row of rows) expect(row).toMatchObject({ status: 'unknown', reason: 'smtp_unavailable' });
  });
});
