import { createHmac } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { newWebhookSecret, signWebhook, verifyWebhookSignature } from '../../src/services/webhooks/sign.js';

describe('Standard Webhooks signing', () => {
  it('matches the Standard Webhooks reference test vector', () => {
    const headers = signWebhook(
      'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw',
      'msg_p5jXN8AQM9LWM0D4loKWxJek',
      1614265330,
      '{"test": 2432232314}',
    );
    expect(headers).toEqual({
      'webhook-id': 'msg_p5jXN8AQM9LWM0D4loKWxJek',
      'webhook-timestamp': '1614265330',
      'webhook-signature': 'v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=',
    });
  });

  it('signs with the base64-decoded secret, as a receiver recomputes it', () => {
    const secret = newWebhookSecret();
    expect(secret).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/);
    const body = '{"type":"job.completed","data":{"job_id":"job_x"}}';
    const headers = signWebhook(secret, 'msg_1', 1700000000, body);
    const mac = createHmac('sha256', Buffer.from(secret.slice('whsec_'.length), 'base64'))
      .update(`msg_1.1700000000.${body}`)
      .digest('base64');
    expect(headers['webhook-signature']).toBe(`v1,${mac}`);
    expect(verifyWebhookSignature(secret, headers, body)).toBe(true);
  });

  it('fails verification for a changed body, id, timestamp or secret', () => {
    const secret = newWebhookSecret();
    const headers = signWebhook(secret, 'msg_1', 1700000000, 'body');
    expect(verifyWebhookSignature(secret, headers, 'body!')).toBe(false);
    expect(verifyWebhookSignature(secret, { ...headers, 'webhook-id': 'msg_2' }, 'body')).toBe(false);
    expect(verifyWebhookSignature(secret, { ...headers, 'webhook-timestamp': '1700000001' }, 'body')).toBe(
      false,
    );
    expect(verifyWebhookSignature(newWebhookSecret(), headers, 'body')).toBe(false);
  });
});
