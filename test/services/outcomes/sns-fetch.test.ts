/**
 * The default SNS fetcher (services/outcomes/esp/sns-fetch.ts) is SSRF-checked: an address
 * inside the network is refused before any connection, whatever the URL says.
 */
import { createServer } from 'node:https';
import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { fetchFromSns } from '../../../src/services/outcomes/esp/sns-fetch.js';

const certs = new URL('../../kit/certs/', import.meta.url);
let hits = 0;
const server = createServer(
  { cert: readFileSync(new URL('cert.pem', certs)), key: readFileSync(new URL('key.pem', certs)) },
  (_req, res) => {
    hits++;
    res.end('-----BEGIN CERTIFICATE-----');
  },
);
let port = 0;
beforeAll(async () => {
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  port = (server.address() as { port: number }).port;
});
afterAll(async () => {
  await new Promise<void>((resolve) => server.close(() => resolve()));
});

describe('fetchFromSns', () => {
  it('refuses a loopback or private address without connecting', async () => {
    for (const host of ['127.0.0.1', '[::1]', '10.0.0.1', '169.254.169.254'])
      await expect(fetchFromSns(new URL(`https://${host}:${port}/cert.pem`))).rejects.toThrow(
        /internal address/,
      );
    expect(hits).toBe(0);
  });
});
