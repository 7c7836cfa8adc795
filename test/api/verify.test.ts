import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createHarness, type Harness } from '../kit/api-harness.js';

const CHECK_KEYS = ['catchAll', 'disposable', 'freeProvider', 'mx', 'roleAddress', 'smtp', 'syntax'];

describe('POST /v1/verify with a test key', () => {
  let h: Harness;
  beforeAll(async () => {
    h = await createHarness();
  });
  afterAll(async () => {
    await h.close();
  });

  it('answers a valid.{test_domain} address with the valid fixture and every contract field typed', async () => {
    const res = await h.verify(h.testKey, { email: 'anna@valid.example.com' });
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-type']).toBe('application/json; charset=utf-8');
    const body = res.json();
    expect(body).toMatchObject({
      valid: true,
      status: 'deliverable',
      score: 99,
      disposable: false,
      catchAll: false,
      mx: true,
      reason: null,
    });
    expect(Number.isInteger(body.latency_ms)).toBe(true);
    expect(body.latency_ms).toBeGreaterThanOrEqual(0);
    expect(Object.keys(body.checks).sort()).toEqual(CHECK_KEYS);
    for (const key of CHECK_KEYS) expect([true, false, null]).toContain(body.checks[key].passed);
    expect(body.checks.smtp.passed).toBe(true);
    expect(body.checks.mx.passed).toBe(true);
    expect(body.request_id).toMatch(/^req_[0-9a-f]{32}$/);
    expect(res.headers['x-request-id']).toBe(body.request_id);
  });

  it('answers an invalid.{test_domain} address with the invalid fixture', async () => {
    const body = (await h.verify(h.testKey, { email: 'bob@invalid.example.com' })).json();
    expect(body).toMatchObject({
      valid: false,
      status: 'undeliverable',
      score: 0,
      reason: 'smtp_rejected',
      mx: true,
    });
    expect(body.checks.smtp).toMatchObject({ passed: false, code: 550 });
  });

  it('answers a disposable.{test_domain} address with the disposable fixture', async () => {
    const body = (await h.verify(h.testKey, { email: 'carl@disposable.example.com' })).json();
    expect(body).toMatchObject({
      valid: false,
      status: 'risky',
      disposable: true,
      reason: 'disposable_domain',
    });
    expect(body.checks.disposable).toMatchObject({ passed: false, value: true });
    expect(body.score).toBeLessThan(60);
  });

  it('matches the fixture domain case-insensitively', async () => {
    const body = (await h.verify(h.testKey, { email: 'Anna@VALID.Example.COM' })).json();
    expect(body.status).toBe('deliverable');
  });

  it('gives the offline result, not a fixture, to a deeper subdomain and to other domains', async () => {
    for (const email of ['anna@x.valid.example.com', 'anna@example.com', 'anna@valid.example.org']) {
      const body = (await h.verify(h.testKey, { email })).json();
      expect(body, email).toMatchObject({ valid: false, status: 'unknown', reason: 'test_mode' });
    }
  });

  it('lets the offline lists decide for other addresses (a known disposable domain)', async () => {
    const body = (await h.verify(h.testKey, { email: 'someone@mailinator.com' })).json();
    expect(body).toMatchObject({ valid: false, disposable: true, reason: 'disposable_domain' });
  });

  it('returns an empty checks object when include_checks is false', async () => {
    const body = (
      await h.verify(h.testKey, { email: 'anna@valid.example.com', include_checks: false })
    ).json();
    expect(body.checks).toEqual({});
    expect(body.status).toBe('deliverable');
  });

  it('ignores unknown extra fields', async () => {
    const res = await h.verify(h.testKey, { email: 'anna@valid.example.com', colour: 'blue' });
    expect(res.statusCode).toBe(200);
  });

  it('refuses a malformed address with 422 invalid_email_format', async () => {
    for (const email of ['not-an-address', 'a@@b.com', '', 'a@b c.com']) {
      const res = await h.verify(h.testKey, { email });
      expect(res.statusCode, email).toBe(422);
      expect(res.json(), email).toMatchObject({
        error: 'invalid_email_format',
        request_id: res.headers['x-request-id'],
      });
    }
  });

  it('refuses an address longer than 254 characters with 422 invalid_email_format', async () => {
    const email = `${'a'.repeat(60)}@${'b'.repeat(60)}.${'c'.repeat(60)}.${'d'.repeat(60)}.${'e'.repeat(20)}.com`;
    expect(email.length).toBeGreaterThan(254);
    const res = await h.verify(h.testKey, { email });
    expect(res.statusCode).toBe(422);
    expect(res.json().error).toBe('invalid_email_format');
  });

  it('never counts test-key verifications and never touches the network', async () => {
    const before = h.dns.queries.length;
    for (let i = 0; i < 5; i++) await h.verify(h.testKey, { email: `x${i}@valid.example.com` });
    await h.verify(h.testKey, { email: 'x@unknown-domain.org' });
    expect(h.dns.queries.length).toBe(before);
    expect((await h.usage(h.testKey)).json().quota.used).toBe(0);
  });

  it('gives the same result for the same address twice apart from timing', async () => {
    const strip = (b: Record<string, unknown>) => ({ ...b, latency_ms: 0, request_id: '' });
    const a = (await h.verify(h.testKey, { email: 'same@valid.example.com' })).json();
    const b = (await h.verify(h.testKey, { email: 'same@valid.example.com' })).json();
    expect(strip(b)).toEqual(strip(a));
    expect(a.request_id).not.toBe(b.request_id);
  });
});

describe('POST /v1/verify with another test domain', () => {
  let h: Harness;
  beforeAll(async () => {
    h = await createHarness({ flags: { testDomain: 'acme.test' } });
  });
  afterAll(async () => {
    await h.close();
  });

  it('uses the configured test_domain for the fixtures', async () => {
    expect((await h.verify(h.testKey, { email: 'a@valid.acme.test' })).json().status).toBe('deliverable');
    expect((await h.verify(h.testKey, { email: 'a@valid.example.com' })).json().reason).toBe('test_mode');
  });
});
