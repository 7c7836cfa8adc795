/** The pure rules of services/outcomes/: which events suppress, lift or count as evidence, and the score's band. */
import { afterAll, describe, expect, it } from 'vitest';
import { createVerifier } from '../../src/engine/verifier.js';
import { SCORE_BANDS } from '../../src/engine/verdict.js';
import { PROVIDERS, type VerificationResult } from '../../src/engine/types.js';
import { withEvidence, PROVIDER_PRIORS } from '../../src/services/outcomes/evidence.js';
import { decideHistory, NO_HISTORY } from '../../src/services/outcomes/history.js';
import { kitEngineOptions } from '../kit/engine-options.js';

const e = (type: string, at: string) => ({ type, at: `2026-03-0${at}T00:00:00.000Z`, source: 'api' });

describe('decideHistory', () => {
  it('suppresses for a hard bounce with no proof of delivery after it', () => {
    expect(decideHistory([e('delivered', '1'), e('hard_bounce', '2')]).suppression?.reason).toBe(
      'previously_bounced',
    );
  });

  it('lifts a bounce with a delivery, open or click strictly after it, not at the same instant', () => {
    for (const type of ['delivered', 'opened', 'clicked'])
      expect(decideHistory([e('hard_bounce', '1'), e(type, '2')]).suppression).toBeNull();
    expect(decideHistory([e('hard_bounce', '1'), e('delivered', '1')]).suppression?.reason).toBe(
      'previously_bounced',
    );
  });

  it('keeps a complaint after a later delivery, and lets a newer unlifted bounce win over it', () => {
    expect(decideHistory([e('complaint', '1'), e('delivered', '2')]).suppression?.reason).toBe('complained');
    expect(decideHistory([e('complaint', '1'), e('hard_bounce', '2')]).suppression?.reason).toBe(
      'previously_bounced',
    );
  });

  it('suppresses nothing for soft bounces and unsubscriptions', () => {
    const h = decideHistory([e('soft_bounce', '1'), e('unsubscribed', '2')]);
    expect(h.suppression).toBeNull();
    expect(h.evidence).toBeNull();
    expect(h.events.map((x) => x.type)).toEqual(['unsubscribed', 'soft_bounce']);
  });
});

describe('the calibrated score', () => {
  // Offline results only: the engine never touches the network here.
  const verifier = createVerifier(kitEngineOptions('127.0.0.1:53', 25));
  afterAll(() => verifier.close());
  const catchAll = (provider: (typeof PROVIDERS)[number] | null, role = false): VerificationResult => {
    const offline = verifier.verifyOffline(role ? 'info@acme.test' : 'anna@acme.test');
    return {
      ...offline,
      status: 'risky',
      reason: 'catch_all',
      score: 55,
      checks: { ...offline.checks, mx: { ...offline.checks.mx, provider } },
    };
  };

  it('stays in the risky band, under 60, for every provider and any counts', () => {
    const now = new Date('2026-03-10T00:00:00Z');
    for (const provider of [null, ...PROVIDERS])
      for (const [delivered, hardBounces] of [
        [0, 0],
        [1_000_000, 0],
        [0, 1_000_000],
        [5, 5],
      ] as const)
        for (const role of [false, true]) {
          const counts = new Map([['acme.test', { domain: 'acme.test', delivered, hardBounces }]]);
          const r = withEvidence(catchAll(provider, role), NO_HISTORY, counts, now);
          expect(r.status).toBe('risky');
          expect(r.score).toBeLessThanOrEqual(59);
          expect(r.score).toBeGreaterThanOrEqual(SCORE_BANDS.risky.min);
        }
  });

  it("gives the engine's catch_all score with no events and the default prior, less with a gateway's prior", () => {
    const now = new Date('2026-03-10T00:00:00Z');
    expect(withEvidence(catchAll(null), NO_HISTORY, new Map(), now).score).toBe(55);
    expect(PROVIDER_PRIORS.proofpoint).toBeDefined();
    expect(withEvidence(catchAll('proofpoint'), NO_HISTORY, new Map(), now).score).toBe(51);
  });
});
