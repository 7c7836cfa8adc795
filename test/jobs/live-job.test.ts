/**
 * A live-key job end to end through the real batch engine, against the in-process DNS server
 * and loopback MTAs: results per address, duplicates and malformed strings, quota counted once
 * per address, and SMTP connections reused (far fewer connections than addresses).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createBatchEngine } from '../../src/engine/batch/batch-engine.js';
import type { BatchEngine } from '../../src/engine/batch/types.js';
import { createChunkVerifier } from '../../src/services/batches/chunk-verifier.js';
import { batchEngineOptions } from '../../src/config.js';
import { startSmtpServers, type SmtpKit } from '../kit/smtp-servers.js';
import { createJobsHarness, type JobsHarness, type ResultsJson } from '../kit/jobs-kit.js';

let kit: SmtpKit;
let h: JobsHarness;
let engine: BatchEngine;

beforeAll(async () => {
  const mailboxes = Array.from({ length: 20 }, (_, i) => `user${i}`);
  kit = await startSmtpServers({ acme: { kind: 'mta', mailboxes } });
  // The engine needs the harness's config, the harness needs the verifier: bound after both exist.
  const bound: { verify?: ReturnType<typeof createChunkVerifier> } = {};
  h = await createJobsHarness({
    flags: { chunkSize: '10', smtpPort: String(kit.port) },
    account: { plan: 'starter' },
    verifyChunk: (...args) => bound.verify!(...args),
  });
  h.dns.setDomain('acme.test', { mx: [{ exchange: 'mx1.acme.test', priority: 10 }] });
  h.dns.setDomain('mx1.acme.test', { a: [kit.hosts.acme!.ip] });
  const { ctx } = h.runtime;
  engine = createBatchEngine(batchEngineOptions(ctx.config));
  bound.verify = createChunkVerifier({
    verifier: ctx.verifier,
    dnsTrust: ctx.dnsTrust,
    batchEngine: engine,
    testDomain: ctx.config.testDomain,
    testModeChunkDelayMs: 0,
  });
});

afterAll(async () => {
  await engine?.close();
  await h?.close();
  await kit?.close();
});

describe('a live-key job', () => {
  it('verifies every address through the batch engine, in order, counting each once', async () => {
    const emails = [
      ...Array.from({ length: 30 }, (_, i) => `user${i}@acme.test`),
      'user3@ACME.test',
      'not-an-address',
    ];
    const res = await h.submit(h.liveKey, { emails, notify_email: false });
    expect(res.statusCode).toBe(202);
    const jobId = res.json<{ job_id: string }>().job_id;
    expect((await h.usage(h.liveKey)).json().quota.used).toBe(32);

    await h.drain();
    const job = (await h.job(h.liveKey, jobId)).json();
    expect(job).toMatchObject({ status: 'completed', total: 32, processed: 32, valid: 21, invalid: 11 });

    const rows = (await h.results(h.liveKey, jobId, 'json')).json<ResultsJson>().results;
    expect(rows.map((r) => r.email)).toEqual(emails);
    for (let i = 0; i < 20; i++) expect(rows[i]).toMatchObject({ status: 'deliverable', reason: null });
    for (let i = 20; i < 30; i++)
      expect(rows[i]).toMatchObject({ status: 'undeliverable', reason: 'smtp_rejected' });
    expect(rows[30]).toMatchObject({ status: 'deliverable' });
    expect(rows[31]).toMatchObject({ status: 'undeliverable', reason: 'invalid_email_format' });
    // user3 is in chunks 0 and 3 (domain spelled differently): probed once, result copied.
    expect(kit.hosts.acme!.commands.filter((c) => /^RCPT TO:<user3@acme\.test>/i.test(c))).toHaveLength(1);
    // Pooled sessions: a handful of connections for 32 addresses, not one each.
    expect(kit.hosts.acme!.connections).toBeLessThan(10);
  });

  it('probes an address repeated across chunks running at the same time once', async () => {
    kit.resetRecords();
    // Four chunks of ten; each starts with user1@acme.test; the worker runs four chunks at once.
    const emails = Array.from({ length: 40 }, (_, i) =>
      i % 10 === 0 ? 'user1@acme.test' : `other${i}@acme.test`,
    );
    const res = await h.submit(h.liveKey, { emails, notify_email: false });
    const jobId = res.json<{ job_id: string }>().job_id;
    h.worker.start();
    try {
      for (let i = 0; i < 200; i++) {
        if ((await h.job(h.liveKey, jobId)).json().status === 'completed') break;
        await new Promise((r) => setTimeout(r, 25));
      }
    } finally {
      await h.worker.stop();
    }
    const rows = (await h.results(h.liveKey, jobId, 'json')).json<ResultsJson>().results;
    expect(rows.filter((r) => r.email === 'user1@acme.test').map((r) => r.status)).toEqual(
      Array(4).fill('deliverable'),
    );
    expect(kit.hosts.acme!.commands.filter((c) => /^RCPT TO:<user1@acme\.test>/i.test(c))).toHaveLength(1);
  });
});
