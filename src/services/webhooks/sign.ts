/**
 * Standard Webhooks signing (https://www.standardwebhooks.com): the signature is
 * `v1,<base64 HMAC-SHA256 of "<webhook-id>.<webhook-timestamp>.<body>">`, keyed with the
 * base64-decoded part of the account's `whsec_<base64>` secret.
 */
import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';

const SECRET_PREFIX = 'whsec_';

/** A new per-account secret: 32 random bytes. */
export function newWebhookSecret(): string {
  return `${SECRET_PREFIX}${randomBytes(32).toString('base64')}`;
}

function secretKey(secret: string): Buffer {
  if (!secret.startsWith(SECRET_PREFIX)) throw new Error('webhook secret must start with whsec_');
  return Buffer.from(secret.slice(SECRET_PREFIX.length), 'base64');
}

export interface SignedHeaders {
  'webhook-id': string;
  'webhook-timestamp': string;
  'webhook-signature': string;
}

/** The three headers for one delivery attempt; `timestamp` is in seconds since the epoch. */
export function signWebhook(secret: string, id: string, timestamp: number, body: string): SignedHeaders {
  const mac = createHmac('sha256', secretKey(secret)).update(`${id}.${timestamp}.${body}`).digest('base64');
  return { 'webhook-id': id, 'webhook-timestamp': String(timestamp), 'webhook-signature': `v1,${mac}` };
}

/**
 * What a receiver does: recompute the HMAC and compare in constant time against each
 * space-separated `v1,` signature. (Receivers should also reject old timestamps.)
 */
export function verifyWebhookSignature(secret: string, headers: SignedHeaders, body: string): boolean {
  const expected = Buffer.from(
    createHmac('sha256', secretKey(secret))
      .update(`${headers['webhook-id']}.${headers['webhook-timestamp']}.${body}`)
      .digest('base64'),
  );
  return headers['webhook-signature'].split(' ').some((sig) => {
    const [version, value] = sig.split(',', 2);
    if (version !== 'v1' || value === undefined) return false;
    const given = Buffer.from(value);
    return given.length === expected.length && timingSafeEqual(given, expected);
  });
}
