/**
 * What test keys (`svc_test_`) get: fixed results chosen by the address's domain, and for any
 * other address the engine's offline verification (syntax and list checks, no network). Never
 * touches the network or the quota. Shared by POST /v1/verify and test-mode batch jobs.
 *
 * | domain                    | valid | status        | score | reason            |
 * | valid.{test_domain}       | true  | deliverable   | 99    | null              |
 * | invalid.{test_domain}     | false | undeliverable | 0     | smtp_rejected     |
 * | disposable.{test_domain}  | false | risky         | 15    | disposable_domain |
 * | anything else             | the offline verdict: unknown / test_mode unless the lists decide |
 *
 * Only the exact subdomain matches (`anna@valid.example.com`, not `anna@x.valid.example.com`).
 */
import type { Checks, VerificationResult } from '../../engine/types.js';
import type { Verifier } from '../../engine/types.js';

type Fixture = 'valid' | 'invalid' | 'disposable';

/** Which fixture an address's (normalised) domain selects, if any. */
export function testFixtureOf(domain: string | null, testDomain: string): Fixture | null {
  if (domain === null) return null;
  const d = domain.toLowerCase();
  const t = testDomain.toLowerCase();
  if (d === `valid.${t}`) return 'valid';
  if (d === `invalid.${t}`) return 'invalid';
  if (d === `disposable.${t}`) return 'disposable';
  return null;
}

function fixtureChecks(offline: Checks, fixture: Fixture, domain: string): Checks {
  const mxHost = `mx.${domain}`;
  const smtpAccepted = fixture !== 'invalid';
  return {
    ...offline,
    mx: {
      passed: true,
      records: [{ exchange: mxHost, priority: 10 }],
      implicit: false,
      error: null,
      // The fixed MX host is in no provider table.
      provider: null,
    },
    smtp: {
      passed: smtpAccepted,
      host: mxHost,
      code: smtpAccepted ? 250 : 550,
      enhanced_code: smtpAccepted ? '2.1.5' : '5.1.1',
      message: smtpAccepted ? 'Recipient OK (test mode)' : 'No such user (test mode)',
      tls: false,
      duration_ms: 0,
    },
    disposable: {
      ...offline.disposable,
      passed: fixture !== 'disposable',
      value: fixture === 'disposable',
      signal: fixture === 'disposable' ? 'domain_list' : offline.disposable.signal,
    },
    catchAll: { passed: true, value: false },
  };
}

/** The result a test key gets for `email`. */
export function testModeResult(email: string, verifier: Verifier, testDomain: string): VerificationResult {
  const offline = verifier.verifyOffline(email);
  const domain = offline.checks.syntax.passed === true ? offline.checks.syntax.domain : null;
  const fixture = testFixtureOf(domain, testDomain);
  if (fixture === null || domain === null) return offline;
  const checks = fixtureChecks(offline.checks, fixture, domain);
  switch (fixture) {
    case 'valid':
      return {
        ...offline,
        valid: true,
        status: 'deliverable',
        score: 99,
        disposable: false,
        catchAll: false,
        mx: true,
        reason: null,
        checks,
      };
    case 'invalid':
      return {
        ...offline,
        valid: false,
        status: 'undeliverable',
        score: 0,
        disposable: false,
        catchAll: false,
        mx: true,
        reason: 'smtp_rejected',
        checks,
      };
    case 'disposable':
      return {
        ...offline,
        valid: false,
        status: 'risky',
        score: 15,
        disposable: true,
        catchAll: false,
        mx: true,
        reason: 'disposable_domain',
        checks,
      };
  }
}
