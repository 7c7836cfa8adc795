import net from 'node:net';
import { createHmac } from 'node:crypto';
import { once } from 'node:events';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import pino from 'pino';
import { afterEach, describe, expect, it } from 'vitest';
import { MINUTE, SECOND } from '../../src/clock.js';
import { DeliveryRunner, RETRY_SCHEDULE_MS } from '../../src/jobs/delivery-runner.js';
import { createMailNotifier, type Notifier } from '../../src/jobs/notify.js';
import { createMailer } from '../../src/services/mailer.js';
import { accountSummary } from '../../src/services/operators/operator-accounts.service.js';
import { submitBatch } from '../../src/services/batches/batch.service.js';
import { intakeAll } from '../../src/services/batches/batch-intake.js';
import { sealLegacySecrets } from '../../src/services/operators/secrets.service.js';
import { webhookSecretFor } from '../../src/services/webhooks/secret.js';
import { newWebhookSecret, verifyWebhookSignature } from '../../src/services/webhooks/sign.js';
import { plansFromConfig } from '../../src/services/usage/plans.js';
import type { HostResolver } from '../../src/services/webhooks/ssrf.js';
import { listDeliveryAttempts, listJobDeliveries } from '../../src/store/delivery.store.js';
import { createJobsHarness, fixtureEmails, type JobsHarness } from '../kit/jobs-kit.js';
import { startMailSink } from '../kit/mail-sink.js';

interface Received {
  headers: http.IncomingHttpHeaders;
  body: string;
}

/** A webhook receiver on loopback answering the scripted statuses in turn (then 200); 'hang' never answers. */
async function startReceiver(script: (number | 'hang')[] = []) {
  const received: Received[] = [];
  const hanging: http.ServerResponse[] = [];
  const server = http.createServer((req, res) => {
    let body = '';
    req.on('data', (c: Buffer) => (body += c.toString()));
    req.on('end', () => {
      received.push({ headers: req.headers, body });
      const next = script.shift() ?? 200;
      if (next === 'hang') hanging.push(res);
      else res.writeHead(next).end('ok');
    });
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const port = (server.address() as AddressInfo).port;
  return {
    url: `http://127.0.0.1:${port}/hook`,
    received,
    async close() {
      for (const r of hanging) r.destroy();
      server.closeAllConnections();
      server.close();
      await once(server, 'close');
    },
  };
}

const closers: (() => Promise<void>)[] = [];
afterEach(async () => {
  while (closers.length > 0) await closers.pop()!();
});

async function harness(flags: Record<string, string> = {}): Promise<JobsHarness> {
  const h = await createJobsHarness({ flags: { chunkSize: '10', allowInsecureWebhooks: 'true', ...flags } });
  closers.push(() => h.close());
  return h;
}

function runner(
  h: JobsHarness,
  notifier: Notifier | null = null,
  resolveHost?: HostResolver,
): DeliveryRunner {
  const { ctx } = h.runtime;
  return new DeliveryRunner({
    db: ctx.db,
    clock: ctx.clock,
    config: ctx.config,
    logger: pino({ level: 'silent' }),
    resolveHost: resolveHost ?? (async () => [{ address: '127.0.0.1', family: 4 }]),
    notifier,
  });
}

async function completedJob(h: JobsHarness, body: Record<string, unknown>): Promise<string> {
  const res = await h.submit(h.testKey, { emails: fixtureEmails(15), ...body });
  expect(res.statusCode).toBe(202);
  await h.drain();
  return res.json<{ job_id: string }>().job_id;
}

/** The webhook secret as the account's owner sees it (the column holds it sealed). */
function secretOf(h: JobsHarness): Promise<string> {
  return webhookSecretFor(h.runtime.ctx.db, h.accountId);
}

/** What the store's column holds. */
async function storedSecretOf(h: JobsHarness): Promise<string | null> {
  const row = await h.runtime.ctx.db
    .selectFrom('accounts')
    .select('webhook_secret')
    .where('id', '=', h.accountId)
    .executeTakeFirstOrThrow();
  return row.webhook_secret;
}

describe('webhook delivery', () => {
  it('POSTs job.completed with the job object, signed so that a receiver can verify it', async () => {
    const h = await harness();
    const rx = await startReceiver();
    closers.push(() => rx.close());
    const jobId = await completedJob(h, { webhook_url: rx.url, notify_email: false });
    expect(await runner(h).runOnce()).toBe(1);

    expect(rx.received).toHaveLength(1);
    const { headers, body } = rx.received[0]!;
    const event = JSON.parse(body);
    expect(event.type).toBe('job.completed');
    expect(event.data).toMatchObject({ job_id: jobId, status: 'completed', total: 15, processed: 15 });
    expect(event.data.download_url).toMatch(new RegExp(`/v1/jobs/${jobId}/results$`));
    expect(headers['content-type']).toBe('application/json');
    expect(headers['webhook-id']).toMatch(/^msg_/);
    expect(headers['webhook-timestamp']).toBe(String(Math.floor(h.clock.now().getTime() / 1000)));
    // What a receiver does: HMAC-SHA256 of "id.timestamp.body" with the base64-decoded secret.
    const secret = await secretOf(h);
    expect(secret).toMatch(/^whsec_/);
    const mac = createHmac('sha256', Buffer.from(secret.slice(6), 'base64'))
      .update(`${String(headers['webhook-id'])}.${String(headers['webhook-timestamp'])}.${body}`)
      .digest('base64');
    expect(headers['webhook-signature']).toBe(`v1,${mac}`);

    const [delivery] = await listJobDeliveries(h.runtime.ctx.db, jobId);
    expect(delivery).toMatchObject({ state: 'delivered', attempts: 1, last_status_code: 200 });
  });

  it('signs with the secret the dashboard reveals, created once and kept; `accounts show` carries none', async () => {
    const h = await harness();
    const { ctx } = h.runtime;
    const secret = await webhookSecretFor(ctx.db, h.accountId);
    expect(secret).toMatch(/^whsec_/);
    const rx = await startReceiver();
    closers.push(() => rx.close());
    await completedJob(h, { webhook_url: rx.url, notify_email: false });
    await runner(h).runOnce();
    const { headers, body } = rx.received[0]!;
    expect(verifyWebhookSignature(secret, headers as never, body)).toBe(true);
    expect(await webhookSecretFor(ctx.db, h.accountId)).toBe(secret);
    const shown = await accountSummary(ctx.db, h.clock, plansFromConfig(ctx.config), h.accountId);
    expect(JSON.stringify(shown)).not.toContain(secret);
    expect(JSON.stringify(shown)).not.toContain('whsec_');
  });

  it('keeps the secret sealed in the store: its column holds neither the secret nor any part of it', async () => {
    const h = await harness();
    const secret = await secretOf(h);
    const stored = await storedSecretOf(h);
    expect(stored).toMatch(/^enc:v1:[A-Za-z0-9_-]{8}:[A-Za-z0-9_-]{16}:[A-Za-z0-9_-]+$/);
    expect(stored).not.toContain(secret.slice('whsec_'.length, 'whsec_'.length + 12));
    // A receiver still verifies what the runner signs with the opened secret.
    const rx = await startReceiver();
    closers.push(() => rx.close());
    await completedJob(h, { webhook_url: rx.url, notify_email: false });
    await runner(h).runOnce();
    const { headers, body } = rx.received[0]!;
    expect(verifyWebhookSignature(secret, headers as never, body)).toBe(true);
  });

  it('signs with a secret an older version stored in plaintext, and seals it at the next start', async () => {
    const h = await harness();
    const legacy = newWebhookSecret();
    await h.runtime.ctx.db
      .updateTable('accounts')
      .set({ webhook_secret: legacy })
      .where('id', '=', h.accountId)
      .execute();
    const rx = await startReceiver();
    closers.push(() => rx.close());
    await completedJob(h, { webhook_url: rx.url, notify_email: false });
    await runner(h).runOnce();
    const { headers, body } = rx.received[0]!;
    expect(verifyWebhookSignature(legacy, headers as never, body)).toBe(true);

    expect(await sealLegacySecrets(h.runtime.ctx.db)).toMatchObject({ 'accounts.webhook_secret': 1 });
    expect(await storedSecretOf(h)).toMatch(/^enc:v1:/);
    expect(await secretOf(h)).toBe(legacy);
    expect(await sealLegacySecrets(h.runtime.ctx.db)).toMatchObject({ 'accounts.webhook_secret': 0 });
  });

  it('retries a failing receiver on the backoff schedule, same webhook-id, every attempt recorded', async () => {
    const h = await harness();
    const rx = await startReceiver([500, 503]);
    closers.push(() => rx.close());
    const jobId = await completedJob(h, { webhook_url: rx.url, notify_email: false });
    const r = runner(h);

    expect(await r.runOnce()).toBe(1);
    expect(await r.runOnce()).toBe(0);
    h.advance(RETRY_SCHEDULE_MS[0]! - 1);
    expect(await r.runOnce()).toBe(0);
    h.advance(1);
    expect(await r.runOnce()).toBe(1);
    h.advance(5 * MINUTE - 1);
    expect(await r.runOnce()).toBe(0);
    h.advance(1);
    expect(await r.runOnce()).toBe(1);

    expect(rx.received.map((x) => x.headers['webhook-id'])).toEqual(
      Array(3).fill(rx.received[0]!.headers['webhook-id']),
    );
    const [delivery] = await listJobDeliveries(h.runtime.ctx.db, jobId);
    expect(delivery).toMatchObject({ state: 'delivered', attempts: 3, last_status_code: 200 });
    const attempts = await listDeliveryAttempts(h.runtime.ctx.db, delivery!.id);
    expect(attempts.map((a) => [a.attempt, a.status_code])).toEqual([
      [1, 500],
      [2, 503],
      [3, 200],
    ]);
  });

  it('treats a receiver that does not answer in time as a failed attempt', async () => {
    const h = await harness({ webhookTimeout: '300ms' });
    const rx = await startReceiver(['hang']);
    closers.push(() => rx.close());
    const jobId = await completedJob(h, { webhook_url: rx.url, notify_email: false });
    await runner(h).runOnce();
    const [delivery] = await listJobDeliveries(h.runtime.ctx.db, jobId);
    expect(delivery).toMatchObject({ state: 'pending', attempts: 1, last_status_code: null });
    expect(delivery!.last_error).toMatch(/timed out/);
    expect(delivery!.next_attempt_at).toBe(new Date(h.clock.now().getTime() + 5 * SECOND).toISOString());
  });

  it('gives up after the last retry of the schedule', async () => {
    const h = await harness();
    const rx = await startReceiver(Array(20).fill(500));
    closers.push(() => rx.close());
    const jobId = await completedJob(h, { webhook_url: rx.url, notify_email: false });
    const r = runner(h);
    await r.runOnce();
    for (const wait of RETRY_SCHEDULE_MS) {
      h.advance(wait);
      expect(await r.runOnce()).toBe(1);
    }
    h.advance(100 * 3600_000);
    expect(await r.runOnce()).toBe(0);
    expect(rx.received).toHaveLength(RETRY_SCHEDULE_MS.length + 1);
    const [delivery] = await listJobDeliveries(h.runtime.ctx.db, jobId);
    expect(delivery).toMatchObject({ state: 'failed', attempts: 8 });
  });

  it('checks the target again at delivery and refuses a name that now resolves inside', async () => {
    const h = await harness({ allowInsecureWebhooks: 'false' });
    const { ctx } = h.runtime;
    let answer = '93.184.215.14';
    const resolveHost: HostResolver = async () => [{ address: answer, family: 4 }];
    const { submission } = await submitBatch(
      {
        db: ctx.db,
        clock: ctx.clock,
        config: ctx.config,
        plans: plansFromConfig(ctx.config),
        resolveHost,
        usageCache: null,
      },
      {
        accountId: h.accountId,
        mode: 'test',
        request: {
          addresses: intakeAll(['a@valid.example.com'], ctx.config.batch.chunkSize),
          webhookUrl: 'https://rebind.example.net/hook',
          notifyEmail: false,
        },
        idempotencyKey: null,
      },
    );
    await h.drain();
    answer = '169.254.169.254';
    await runner(h, null, resolveHost).runOnce();
    const [delivery] = await listJobDeliveries(ctx.db, submission.job_id);
    expect(delivery).toMatchObject({ state: 'failed', attempts: 1 });
    expect(delivery!.last_error).toMatch(/internal address \(169\.254\.169\.254\)/);
  });

  it('connects to the address the guard checked, not to a fresh lookup of the name', async () => {
    const h = await harness();
    const rx = await startReceiver();
    closers.push(() => rx.close());
    const port = new URL(rx.url).port;
    // hooks.invalid cannot resolve through the system; only the guard's answer leads to the receiver.
    const url = `http://hooks.invalid:${port}/hook`;
    const resolveHost: HostResolver = async (host) =>
      host === 'hooks.invalid' ? [{ address: '127.0.0.1', family: 4 }] : [];
    const { ctx } = h.runtime;
    const { submission } = await submitBatch(
      {
        db: ctx.db,
        clock: ctx.clock,
        config: ctx.config,
        plans: plansFromConfig(ctx.config),
        resolveHost,
        usageCache: null,
      },
      {
        accountId: h.accountId,
        mode: 'test',
        request: {
          addresses: intakeAll(['a@valid.example.com'], ctx.config.batch.chunkSize),
          webhookUrl: url,
          notifyEmail: false,
        },
        idempotencyKey: null,
      },
    );
    await h.drain();
    await runner(h, null, resolveHost).runOnce();
    expect(rx.received).toHaveLength(1);
    expect(rx.received[0]!.headers.host).toBe(`hooks.invalid:${port}`);
    const [delivery] = await listJobDeliveries(ctx.db, submission.job_id);
    expect(delivery).toMatchObject({ state: 'delivered' });
  });

  it('sends job.failed for a cancelled job', async () => {
    const h = await harness();
    const rx = await startReceiver();
    closers.push(() => rx.close());
    const res = await h.submit(h.testKey, { emails: fixtureEmails(30), webhook_url: rx.url });
    const jobId = res.json<{ job_id: string }>().job_id;
    await h.inject({
      method: 'DELETE',
      url: `/v1/jobs/${jobId}`,
      headers: { authorization: `Bearer ${h.testKey}` },
    });
    await runner(h).runOnce();
    expect(rx.received).toHaveLength(1);
    expect(JSON.parse(rx.received[0]!.body)).toMatchObject({
      type: 'job.failed',
      data: { job_id: jobId, status: 'failed', error: 'cancelled' },
    });
    // No completion e-mail for a job that did not complete.
    expect((await listJobDeliveries(h.runtime.ctx.db, jobId)).map((d) => d.channel)).toEqual(['webhook']);
  });
});

describe('notification e-mail', () => {
  it('sends the account a summary with the download link through the SMTP relay', async () => {
    const sink = await startMailSink();
    closers.push(() => sink.close());
    const messages = sink.messages;
    const port = new URL(sink.url).port;

    const h = await harness({
      smtpRelayUrl: `smtp://127.0.0.1:${port}`,
      publicBaseUrl: 'https://verify.example.net',
    });
    const mailer = createMailer(h.runtime.ctx.config)!;
    closers.push(async () => mailer.close());
    const notifier = createMailNotifier(mailer)!;
    const jobId = await completedJob(h, {});
    expect(await runner(h, notifier).runOnce()).toBe(1);

    expect(messages).toHaveLength(1);
    expect(messages[0]!.to).toEqual(['owner@example.org']);
    const text = messages[0]!.data.replace(/=\r?\n/g, '');
    expect(text).toContain(`Subject: Batch job ${jobId} completed: 4 of 15 valid`);
    expect(text).toContain(`https://verify.example.net/v1/jobs/${jobId}/results`);
    const [delivery] = await listJobDeliveries(h.runtime.ctx.db, jobId);
    expect(delivery).toMatchObject({ channel: 'email', state: 'delivered' });
  });

  it('keeps retrying on the schedule when the relay is down, then gives up as documented (fault injection)', async () => {
    // A port nothing listens on: every connection to the relay is refused.
    const closed = net.createServer();
    closed.listen(0, '127.0.0.1');
    await once(closed, 'listening');
    const port = (closed.address() as AddressInfo).port;
    closed.close();
    await once(closed, 'close');
    const h = await harness({ smtpRelayUrl: `smtp://127.0.0.1:${port}` });
    const mailer = createMailer(h.runtime.ctx.config)!;
    closers.push(async () => mailer.close());
    const notifier = createMailNotifier(mailer)!;
    const jobId = await completedJob(h, {});
    const r = runner(h, notifier);
    expect(await r.runOnce()).toBe(1);
    const [first] = await listJobDeliveries(h.runtime.ctx.db, jobId);
    expect(first).toMatchObject({ channel: 'email', state: 'pending', attempts: 1 });
    for (const wait of RETRY_SCHEDULE_MS) {
      h.advance(wait);
      expect(await r.runOnce()).toBe(1);
    }
    h.advance(100 * 3600_000);
    expect(await r.runOnce()).toBe(0);
    const [last] = await listJobDeliveries(h.runtime.ctx.db, jobId);
    expect(last).toMatchObject({ channel: 'email', state: 'failed', attempts: RETRY_SCHEDULE_MS.length + 1 });
  });

  it('is skipped, not failed, when no relay is configured', async () => {
    const h = await harness();
    const jobId = await completedJob(h, {});
    await runner(h, null).runOnce();
    const [delivery] = await listJobDeliveries(h.runtime.ctx.db, jobId);
    expect(delivery).toMatchObject({ channel: 'email', state: 'skipped', attempts: 1 });
  });

  it('is not queued when notify_email is false', async () => {
    const h = await harness();
    const jobId = await completedJob(h, { notify_email: false });
    expect(await listJobDeliveries(h.runtime.ctx.db, jobId)).toEqual([]);
  });
});
