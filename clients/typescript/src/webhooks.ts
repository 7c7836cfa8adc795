/**
 * Webhook signatures (docs/webhooks.md): mailverdict signs as Standard Webhooks specifies
 * (`webhook-id`, `webhook-timestamp`, `webhook-signature: v1,<base64 HMAC-SHA256>`, key the
 * base64 after `whsec_`), so the reference library `standardwebhooks` checks them, in Node and
 * browsers alike, with its 5-minute replay window.
 */
import { Webhook, WebhookVerificationError } from 'standardwebhooks';
import type { Job } from './types.js';

export { WebhookVerificationError };

/** A webhook's body: the job as it was when it ended, without `request_id`. */
export interface WebhookEvent {
  type: 'job.completed' | 'job.failed';
  data: Omit<Job, 'request_id'>;
}

/** Header lookup as Node's `IncomingHttpHeaders` (lower-case keys) or a fetch `Headers`. */
export type WebhookHeaders = Headers | Record<string, string | string[] | undefined>;

const NAMES = ['webhook-id', 'webhook-timestamp', 'webhook-signature'] as const;

function pick(headers: WebhookHeaders): Record<string, string> {
  const out: Record<string, string> = {};
  for (const name of NAMES) {
    const value = headers instanceof Headers ? headers.get(name) : headers[name];
    const one = Array.isArray(value) ? value[0] : value;
    if (typeof one !== 'string') throw new WebhookVerificationError(`missing ${name} header`);
    out[name] = one;
  }
  return out;
}

/**
 * The event, once its signature is checked with the account's `whsec_…` secret
 * (`mailverdict accounts show`); throws WebhookVerificationError for a wrong signature, a
 * timestamp over 5 minutes away, or a missing header. `body` is the raw body, exactly as received.
 */
export function verifyWebhook(secret: string, headers: WebhookHeaders, body: string): WebhookEvent {
  return new Webhook(secret).verify(body, pick(headers)) as WebhookEvent;
}
