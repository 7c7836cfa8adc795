/**
 * The default `SnsFetch`: an https GET of an SNS host, SSRF-checked (the name must resolve to
 * public addresses only, and the connection goes to the address checked), bounded in time and in
 * size. `sns.ts` has already checked that the URL is an SNS host's.
 */
import https from 'node:https';
import type { LookupFunction } from 'node:net';
import { SECOND } from '../../../clock.js';
import { checkWebhookTarget, systemResolver } from '../../webhooks/ssrf.js';
import type { SnsFetch } from './sns.js';

const TIMEOUT_MS = 5 * SECOND;
/** A certificate is about 2 KiB; a confirmation's answer less. */
const MAX_BYTES = 64 * 1024;

export const fetchFromSns: SnsFetch = async (url) => {
  const target = await checkWebhookTarget(url, { allowInsecure: false, resolve: systemResolver });
  const pinned = target.addresses[0]!;
  const lookup: LookupFunction = (_host, options, callback) => {
    if (options.all === true) callback(null, [{ address: pinned.address, family: pinned.family }]);
    else callback(null, pinned.address, pinned.family);
  };
  return new Promise<string>((resolve, reject) => {
    const req = https.get(url, { lookup, signal: AbortSignal.timeout(TIMEOUT_MS) }, (res) => {
      const chunks: Buffer[] = [];
      let size = 0;
      res.on('data', (chunk: Buffer) => {
        size += chunk.length;
        if (size > MAX_BYTES) res.destroy(new Error(`more than ${MAX_BYTES} bytes`));
        else chunks.push(chunk);
      });
      res.on('end', () =>
        res.statusCode === 200
          ? resolve(Buffer.concat(chunks).toString('utf8'))
          : reject(new Error(`HTTP ${res.statusCode ?? 'no status'}`)),
      );
      res.on('error', reject);
    });
    req.on('error', reject);
  });
};
