/** verifyWebhook on a webhook that a real `mailverdict serve` delivered to a receiver on loopback. */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Mailverdict, verifyWebhook, WebhookVerificationError } from '../src/index.js';
import { startReceiver, startServer, type Delivery, type Server } from './client-kit.js';

let server: Server;
let receiver: Awaited<ReturnType<typeof startReceiver>>;
let delivery: Delivery;
let jobId: string;
let secret: string;

beforeAll(async () => {
  [server, receiver] = await Promise.all([startServer(), startReceiver()]);
  const mv = new Mailverdict({ apiKey: server.testKey, baseUrl: server.url });
  const accepted = await mv.submitBatch({
    emails: ['anna@valid.example.com'],
    webhook_url: receiver.url,
    notify_email: false,
  });
  jobId = accepted.job_id;
  [delivery, secret] = await Promise.all([receiver.next(), server.webhookSecret()]);
});
afterAll(async () => {
  await Promise.all([server?.stop(), receiver?.close()]);
});

describe('verifyWebhook', () => {
  it("accepts a delivered webhook with the account's secret and returns the typed event", () => {
    const event = verifyWebhook(secret, delivery.headers, delivery.body);
    expect(event.type).toBe('job.completed');
    expect(event.data).toMatchObject({ job_id: jobId, status: 'completed', total: 1, processed: 1 });
  });

  it('accepts the headers as a fetch Headers object too', () => {
    const headers = new Headers();
    for (const [name, value] of Object.entries(delivery.headers))
      if (typeof value === 'string') headers.set(name, value);
    expect(verifyWebhook(secret, headers, delivery.body).data.job_id).toBe(jobId);
  });

  it('refuses a body changed by one byte', () => {
    const changed = delivery.body.replace('"total":1', '"total":2');
    expect(changed).not.toBe(delivery.body);
    expect(() => verifyWebhook(secret, delivery.headers, changed)).toThrow(WebhookVerificationError);
  });

  it('refuses another secret', () => {
    const other = `whsec_${Buffer.from('another account secret, 32 bytes').toString('base64')}`;
    expect(() => verifyWebhook(other, delivery.headers, delivery.body)).toThrow(WebhookVerificationError);
  });

  it('refuses a delivery without its signature header', () => {
    const { 'webhook-signature': _dropped, ...headers } = delivery.headers;
    expect(() => verifyWebhook(secret, headers, delivery.body)).toThrow(/webhook-signature/);
  });
});
