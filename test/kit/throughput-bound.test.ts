/**
 * The throughput bound the Postfix-like batch benchmark reports (test/kit/throughput-bound.ts):
 * its session expectations agree with what can be counted by hand, and the bound keeps the
 * client under the soft error limit.
 */
import { describe, expect, it } from 'vitest';
import type { HostWork, ServerRules } from './throughput-bound.js';
import { expectSession, policyRate, throughputBound } from './throughput-bound.js';

const RULES: ServerRules = {
  latencyMs: 20,
  inFlowDelayMs: 1000,
  softErrorLimit: 10,
  errorSleepMs: 1000,
  recipientLimit: 1000,
};
const LIMITS = { perHostConcurrency: 5, globalConcurrency: 200, egress: 1, clientConnectionLimit: 50 };
const POLICY = {
  maxRejectsPerSession: 8,
  pipelineDepth: 32,
  recipientsPerSession: 500,
  recipientsPerTransaction: 100,
};

describe('expectSession', () => {
  it('carries reject budget ÷ refused share RCPTs when nothing else ends the session', () => {
    const session = expectSession(0.1, RULES, { ...POLICY, recipientsPerTransaction: 500 });
    expect(session.rcpts).toBeCloseTo(80, 6);
    expect(session.transactions).toBeCloseTo(1, 6);
  });

  it('with nothing refused, fills the session, one RCPT per round trip without pipelining', () => {
    const session = expectSession(0, RULES, { ...POLICY, pipelineDepth: 1, recipientsPerSession: 250 });
    expect(session.rcpts).toBe(250);
    expect(session.roundTrips).toBe(3 + 250);
    expect(session.transactions).toBe(3); // 100 + 100 + 50
    expect(session.timeMs).toBe(253 * 20 + 3 * 1000);
  });

  it('never sends more RCPTs at once than the rejects left', () => {
    // All refused: each round trip carries the rejects left, so a budget of 8 takes one.
    const session = expectSession(1, RULES, POLICY);
    expect(session.rcpts).toBe(8);
    expect(session.roundTrips).toBe(3 + 1);
  });
});

describe('throughputBound', () => {
  const work: HostWork[] = [
    { host: 'a', rcpts: 10_100, addresses: 10_000, refused: 0.1 },
    { host: 'b', rcpts: 10_100, addresses: 10_000, refused: 0.12 },
  ];

  it('keeps the client one error under the soft limit, and the slowest host sets the pace', () => {
    const bound = throughputBound(work, LIMITS, RULES);
    expect(bound.hosts.map((h) => h.rejectBudget)).toEqual([9, 9]);
    expect(bound.slowest.host.host).toBe('b');
    expect(bound.addressesPerSecond).toBeCloseTo(20_000 / bound.slowest.seconds, 6);
  });

  it('is above what any other policy achieves', () => {
    const bound = throughputBound(work, LIMITS, RULES);
    for (const policy of [POLICY, { ...POLICY, maxRejectsPerSession: 10, recipientsPerTransaction: 500 }]) {
      expect(policyRate(work, LIMITS, RULES, policy).addressesPerSecond).toBeLessThan(
        bound.addressesPerSecond,
      );
    }
  });
});
