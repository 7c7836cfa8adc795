/**
 * Issue 25, part 1, for batches: while the resolver answers NXDOMAIN for every name, a live job's
 * addresses stay pending (the chunk is not completed, nothing settles as undeliverable); once the
 * resolver is trusted again they are verified again and the job completes with the truth.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createBatchEngine } from '../../src/engine/batch/batch-engine.js';
import type { BatchEngine } from '../../src/engine/batch/types.js';
import { createChunkVerifier } from '../../src/services/batches/chunk-verifier.js';
import { batchEngineOptions } from '../../src/config.js';
import { startSmtpServers, type SmtpKit } from '../kit/smtp-servers.js';
import { createJobsHarness, type JobsHarness, type ResultsJson } from '../kit/jobs-kit.js';
import { waitFor } from '../kit/wait-for.js';

const ANCHORS = ['anchor-a.test', 'anchor-b.test'];

let kit: SmtpKit;
let h: JobsHarness;
let engine: BatchEngine;

beforeAll(async () => {
  kit = await startSmtpServers({ acme: { kind: 'mta', mailboxes: ['user0', 'user1', 'user2', 'user3'] } });
  const bound: { verify?: ReturnType<typeof createChunkVerifier> } = {};
  h = await createJobsHarness({
    // The probe names are left out of the zone: the server answers NXDOMAIN for everything asked.
    flags: {
      chunkSize: '10',
      smtpPort: String(kit.port),
      dnsTrustName: ANCHORS.join(','),
      dnsTrustAbsentZone: 'test',
    },
    account: { plan: 'starter' },
    verifyChunk: (...args) => bound.verify!(...args),
  });
  const { ctx } = h.runtime;
  engine = createBatchEngine(batchEngineOptions(ctx.config), { trust: ctx.dnsTrust });
  bound.verify = createChunkVerifier({
    verifier: ctx.verifier,
    dnsTrust: ctx.dnsTrust,
    batchEngine: engine,
    testDomain: ctx.config.testDomain,
    testModeChunkDelayMs: 0,
  });
});

afterAll(async () => {
  await h?.worker.stop();
  await engine?.close();
  await h?.close();
  await kit?.close();
});

describe('a live job while the resolver answers NXDOMAIN for every name', () => {
  it('keeps its addresses pending, then verifies them again once the resolver is trusted', async () => {
    const emails = ['user0@acme.test', 'user1@acme.test', 'nobody@acme.test', 'x@no-such-domain.test'];
    const res = await h.submit(h.liveKey, { emails, notify_email: false });
    expect(res.statusCode).toBe(202);
    const jobId = res.json<{ job_id: string }>().job_id;

    h.worker.start();
    // The engine asked, and the monitor judged the resolver untrusted.
    await waitFor(
      'the job domain asked and the resolver judged',
      async () =>
        h.dns.queryCount('acme.test', 'MX') > 0 && h.runtime.dnsTrust.status().state === 'untrusted'
          ? true
          : undefined,
      10_000,
      20,
    );
    const waiting = (await h.job(h.liveKey, jobId)).json();
    expect(waiting).toMatchObject({ status: 'processing', processed: 0 });
    expect(waiting.invalid ?? 0).toBe(0);

    // The resolver tells the truth again.
    for (const name of ANCHORS) h.dns.setDomain(name, { mx: [{ exchange: `mx.${name}`, priority: 1 }] });
    h.dns.setDomain('acme.test', { mx: [{ exchange: 'mx1.acme.test', priority: 10 }] });
    h.dns.setDomain('mx1.acme.test', { a: [kit.hosts.acme!.ip] });
    expect((await h.runtime.dnsTrust.check()).state).toBe('trusted');

    await waitFor(
      'the job completed',
      async () => ((await h.job(h.liveKey, jobId)).json().status === 'completed' ? true : undefined),
      20_000,
      25,
    );
    const rows = (await h.results(h.liveKey, jobId, 'json')).json<ResultsJson>().results;
    expect(rows.map((r) => [r.email, r.status, r.reason])).toEqual([
      ['user0@acme.test', 'deliverable', null],
      ['user1@acme.test', 'deliverable', null],
      ['nobody@acme.test', 'undeliverable', 'smtp_rejected'],
      ['x@no-such-domain.test', 'undeliverable', 'domain_not_found'],
    ]);
    // Asked once while the resolver lied, and again once it was trusted.
    expect(h.dns.queryCount('acme.test', 'MX')).toBeGreaterThanOrEqual(2);
  });
});
