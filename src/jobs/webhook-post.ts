/**
 * One webhook HTTP call: POST the signed JSON body to the checked address of the target (the
 * SSRF guard's answer, never a fresh DNS lookup), with a total timeout.
 */
import http from 'node:http';
import https from 'node:https';
import type { LookupFunction } from 'node:net';
import type { WebhookTarget } from '../services/webhooks/ssrf.js';

export interface PostOutcome {
  /** HTTP status, or null when no response came (timeout, refused, TLS error). */
  statusCode: number | null;
  error: string | null;
}

/** Bytes of the receiver's answer that are read (and discarded); the rest is cut off. */
const MAX_RESPONSE_BYTES = 64 * 1024;

export async function postWebhook(
  target: WebhookTarget,
  body: string,
  headers: Record<string, string>,
  timeoutMs: number,
): Promise<PostOutcome> {
  const pinned = target.addresses[0];
  if (!pinned) return { statusCode: null, error: 'no checked address to connect to' };
  // Connect to the address that passed the guard; the URL's host still goes into Host and TLS SNI.
  const lookup: LookupFunction = (_host, options, callback) => {
    if (options.all === true) callback(null, [{ address: pinned.address, family: pinned.family }]);
    else callback(null, pinned.address, pinned.family);
  };
  const client = target.url.protocol === 'https:' ? https : http;
  return new Promise<PostOutcome>((resolve) => {
    const req = client.request(
      target.url,
      {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          'content-length': Buffer.byteLength(body),
          'user-agent': 'mailverdict-webhooks/1',
          ...headers,
        },
        lookup,
        signal: AbortSignal.timeout(timeoutMs),
      },
      (res) => {
        let read = 0;
        res.on('data', (chunk: Buffer) => {
          read += chunk.length;
          if (read > MAX_RESPONSE_BYTES) res.destroy();
        });
        res.on('close', () => resolve({ statusCode: res.statusCode ?? null, error: null }));
        res.on('error', () => resolve({ statusCode: res.statusCode ?? null, error: null }));
      },
    );
    req.on('error', (err) =>
      resolve({
        statusCode: null,
        error: err.name === 'AbortError' ? `timed out after ${timeoutMs} ms` : err.message,
      }),
    );
    req.end(body);
  });
}
