/**
 * The mail systems' webhooks in `npm run bench:outcomes` (issue 27): events per second through one
 * outcome source's URL, through the real app (`app.inject`), with real signatures made here:
 * SendGrid batches of 1,000 events (ECDSA P-256 checked per POST), and Mailgun's one event per POST
 * (HMAC, and the token recorded against replay).
 */
import { createHmac, generateKeyPairSync, sign } from 'node:crypto';
import { performance } from 'node:perf_hooks';
import { createOutcomeSource } from '../src/services/outcomes/sources.service.js';
import type { Harness } from '../test/kit/api-harness.js';

const BATCH = 1000;

async function post(h: Harness, url: string, body: string, headers: Record<string, string>): Promise<void> {
  const res = await h.inject({
    method: 'POST',
    url: new URL(url).pathname,
    headers: { 'content-type': 'application/json', ...headers },
    payload: body,
  });
  if (res.statusCode !== 200) throw new Error(`hook failed: ${res.statusCode} ${res.body.slice(0, 200)}`);
}

/** Prints events/s through a SendGrid and a Mailgun source; `rounds` SendGrid batches, 20 × `rounds` Mailgun POSTs. */
export async function hookFigures(
  h: Harness,
  backend: string,
  rounds: number,
  deadline: number,
): Promise<void> {
  const { db, clock } = h.runtime.ctx;
  const base = h.runtime.ctx.config.publicBaseUrl;
  const now = Math.floor(clock.now().getTime() / 1000);

  const pair = generateKeyPairSync('ec', { namedCurve: 'P-256' });
  const sendgrid = await createOutcomeSource(db, clock, base, {
    accountId: h.accountId,
    provider: 'sendgrid',
    verificationKey: pair.publicKey.export({ type: 'spki', format: 'der' }).toString('base64'),
  });
  let batches = 0;
  let started = performance.now();
  for (; batches < rounds && performance.now() < deadline; batches++) {
    const body = JSON.stringify(
      Array.from({ length: BATCH }, (_, i) => ({
        email: `sg${batches}-user${i}@bench${i % 50}.test`,
        timestamp: now - 60,
        event: i % 10 === 0 ? 'bounce' : 'delivered',
        ...(i % 10 === 0 ? { type: 'bounce', status: '5.1.1', reason: '550 5.1.1 unknown user' } : {}),
        sg_event_id: `sg-${batches}-${i}`,
        sg_message_id: `m-${batches}-${i}`,
      })),
    );
    const timestamp = String(now);
    const signature = sign('sha256', Buffer.from(timestamp + body), {
      key: pair.privateKey,
      dsaEncoding: 'der',
    });
    await post(h, sendgrid.url, body, {
      'x-twilio-email-event-webhook-signature': signature.toString('base64'),
      'x-twilio-email-event-webhook-timestamp': timestamp,
    });
  }
  const sgMs = performance.now() - started;

  const signingKey = 'key-bench-3ax6xnjp29jd6fds4gc373sgvjxteol0';
  const mailgun = await createOutcomeSource(db, clock, base, {
    accountId: h.accountId,
    provider: 'mailgun',
    verificationKey: signingKey,
  });
  let singles = 0;
  started = performance.now();
  for (; singles < 20 * rounds && performance.now() < deadline; singles++) {
    const token = `bench-token-${singles}-aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa`;
    const timestamp = String(now - 30);
    const signature = createHmac('sha256', signingKey)
      .update(timestamp + token)
      .digest('hex');
    const body = JSON.stringify({
      signature: { token, timestamp, signature },
      'event-data': {
        id: `mg-${singles}`,
        event: 'delivered',
        timestamp: now - 40,
        recipient: `mg-user${singles}@bench${singles % 50}.test`,
        'delivery-status': { code: 250, message: 'OK' },
      },
    });
    await post(h, mailgun.url, body, {});
  }
  const mgMs = performance.now() - started;
  console.log(
    `${backend}: ESP webhooks through one source's URL: SendGrid, ${batches} signed batches of ${BATCH}: ` +
      `${(sgMs / batches).toFixed(0)} ms per batch (${Math.round((batches * BATCH) / (sgMs / 1000)).toLocaleString('en')} events/s); ` +
      `Mailgun, ${singles} signed POSTs of one event: ${(mgMs / singles).toFixed(2)} ms per POST (${Math.round(singles / (mgMs / 1000)).toLocaleString('en')} events/s)`,
  );
}
