import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildApp } from '../../src/api/app.js';
import { createHarness, type Harness } from '../kit/api-harness.js';

function expectEnvelope(
  res: { statusCode: number; headers: Record<string, unknown>; json(): Record<string, unknown> },
  status: number,
  code: string,
) {
  expect(res.statusCode).toBe(status);
  expect(res.headers['content-type']).toBe('application/json; charset=utf-8');
  const body = res.json() as { error: string; message: string; request_id: string };
  expect(Object.keys(body).sort()).toEqual(['error', 'message', 'request_id']);
  expect(body.error).toBe(code);
  expect(typeof body.message).toBe('string');
  expect(body.message.length).toBeGreaterThan(0);
  expect(body.request_id).toMatch(/^req_\w+$/);
  expect(res.headers['x-request-id']).toBe(body.request_id);
  return body;
}

describe('error responses', () => {
  let h: Harness;
  beforeAll(async () => {
    h = await createHarness();
  });
  afterAll(async () => {
    await h.close();
  });

  const post = (headers: Record<string, string>, payload?: string) =>
    h.inject({ method: 'POST', url: '/v1/verify', headers, ...(payload === undefined ? {} : { payload }) });

  it('401 invalid_api_key without an Authorization header', async () => {
    expectEnvelope(
      await post({ 'content-type': 'application/json' }, '{"email":"a@valid.example.com"}'),
      401,
      'invalid_api_key',
    );
  });

  it('401 invalid_api_key for a scheme other than Bearer', async () => {
    const res = await post(
      { authorization: `Basic ${h.testKey}`, 'content-type': 'application/json' },
      '{"email":"a@b.co"}',
    );
    expectEnvelope(res, 401, 'invalid_api_key');
  });

  it('401 invalid_api_key for a malformed key', async () => {
    for (const key of [
      'svc_live_short',
      'sk_live_0123456789012345678901234567890123',
      `svc_prod_${'a'.repeat(40)}`,
      'Bearer',
    ]) {
      const res = await post(
        { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
        '{"email":"a@b.co"}',
      );
      expectEnvelope(res, 401, 'invalid_api_key');
    }
  });

  it('401 invalid_api_key for a well-formed key that does not exist', async () => {
    const res = await h.verify(`svc_live_${'A'.repeat(40)}`, { email: 'a@valid.example.com' });
    expectEnvelope(res, 401, 'invalid_api_key');
  });

  it('401 invalid_api_key when the prefix of a real key is swapped', async () => {
    const swapped = h.testKey.replace('svc_test_', 'svc_live_');
    expectEnvelope(await h.verify(swapped, { email: 'a@valid.example.com' }), 401, 'invalid_api_key');
  });

  it('authenticates before reading the body: a bad key with a bad body is 401', async () => {
    const res = await post({ authorization: 'Bearer nope', 'content-type': 'text/plain' }, 'hello');
    expectEnvelope(res, 401, 'invalid_api_key');
  });

  it('415 unsupported_media_type for a body that is not JSON', async () => {
    const auth = { authorization: `Bearer ${h.testKey}` };
    expectEnvelope(
      await post({ ...auth, 'content-type': 'text/plain' }, 'email=a@b.co'),
      415,
      'unsupported_media_type',
    );
    expectEnvelope(
      await post({ ...auth, 'content-type': 'application/x-www-form-urlencoded' }, 'email=a@b.co'),
      415,
      'unsupported_media_type',
    );
    expectEnvelope(await post(auth, '{"email":"a@valid.example.com"}'), 415, 'unsupported_media_type');
    expectEnvelope(await post(auth), 415, 'unsupported_media_type');
  });

  it('accepts application/json with a charset parameter', async () => {
    const res = await post(
      { authorization: `Bearer ${h.testKey}`, 'content-type': 'application/json; charset=utf-8' },
      '{"email":"a@valid.example.com"}',
    );
    expect(res.statusCode).toBe(200);
  });

  it('400 invalid_json for malformed JSON and for an empty JSON body', async () => {
    const headers = { authorization: `Bearer ${h.testKey}`, 'content-type': 'application/json' };
    expectEnvelope(await post(headers, '{"email": "a@b.co",'), 400, 'invalid_json');
    expectEnvelope(await post(headers, ''), 400, 'invalid_json');
  });

  it('422 invalid_request naming the field for a missing or mistyped field', async () => {
    const cases: [unknown, string][] = [
      [{}, 'email'],
      [{ email: 42 }, 'email'],
      [{ email: 'a@valid.example.com', timeout_ms: '300' }, 'timeout_ms'],
      [{ email: 'a@valid.example.com', timeout_ms: 300.5 }, 'timeout_ms'],
      [{ email: 'a@valid.example.com', timeout_ms: 99 }, 'timeout_ms'],
      [{ email: 'a@valid.example.com', timeout_ms: 5001 }, 'timeout_ms'],
      [{ email: 'a@valid.example.com', include_checks: 'yes' }, 'include_checks'],
      [[], 'body'],
      ['a@valid.example.com', 'body'],
    ];
    for (const [payload, field] of cases) {
      const res = await h.inject({
        method: 'POST',
        url: '/v1/verify',
        headers: { authorization: `Bearer ${h.testKey}`, 'content-type': 'application/json' },
        payload: JSON.stringify(payload),
      });
      const body = expectEnvelope(res, 422, 'invalid_request');
      expect(body.message, JSON.stringify(payload)).toContain(field);
    }
  });

  it('accepts timeout_ms at both ends of 100-5000', async () => {
    for (const timeout_ms of [100, 5000]) {
      expect((await h.verify(h.testKey, { email: 'a@valid.example.com', timeout_ms })).statusCode).toBe(200);
    }
  });

  it('413 payload_too_large for a body over the limit', async () => {
    const res = await h.verify(h.testKey, {
      email: 'a@valid.example.com',
      padding: 'x'.repeat(2 * 1024 * 1024),
    });
    expectEnvelope(res, 413, 'payload_too_large');
  });

  it('404 not_found for unknown routes, with or without a key, before any body is read', async () => {
    expectEnvelope(await h.inject({ method: 'GET', url: '/v1/nothing' }), 404, 'not_found');
    expectEnvelope(await h.inject({ method: 'GET', url: '/v1/else/where?x=1' }), 404, 'not_found');
    expectEnvelope(
      await h.inject({
        method: 'POST',
        url: '/v2/verify',
        headers: { 'content-type': 'text/plain' },
        payload: 'x',
      }),
      404,
      'not_found',
    );
  });

  it('405 method_not_allowed with an Allow header for a known path and another method', async () => {
    const get = await h.inject({
      method: 'GET',
      url: '/v1/verify',
      headers: { authorization: `Bearer ${h.testKey}` },
    });
    expectEnvelope(get, 405, 'method_not_allowed');
    // OPTIONS: the CORS preflight of publishable keys (docs/widget.md).
    expect(get.headers.allow).toBe('POST, OPTIONS');
    const del = await h.inject({ method: 'DELETE', url: '/v1/account/usage' });
    expectEnvelope(del, 405, 'method_not_allowed');
    expect(del.headers.allow).toBe('GET, HEAD');
    const put = await h.inject({
      method: 'PUT',
      url: '/v1/verify',
      headers: { 'content-type': 'text/plain' },
      payload: 'x',
    });
    expectEnvelope(put, 405, 'method_not_allowed');
  });

  it('500 internal_error without a stack trace when something unexpected fails', async () => {
    const real = h.runtime.ctx.verifier;
    const verifier = {
      verify: real.verify.bind(real),
      verifyMailHosts: real.verifyMailHosts.bind(real),
      close: async () => {},
      verifyOffline: () => {
        throw new Error('secret internal detail at /srv/app.js:12');
      },
    };
    const app = buildApp({ ...h.runtime.ctx, verifier });
    try {
      const res = await app.inject({
        method: 'POST',
        url: '/v1/verify',
        headers: { authorization: `Bearer ${h.testKey}` },
        payload: { email: 'a@valid.example.com' },
      });
      const body = expectEnvelope(res, 500, 'internal_error');
      expect(res.body).not.toContain('secret internal detail');
      expect(res.body).not.toMatch(/stack|\.js:\d+/);
      expect(body.message).toContain('request_id');
    } finally {
      await app.close();
    }
  });
});
