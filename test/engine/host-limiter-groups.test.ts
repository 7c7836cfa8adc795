/**
 * The host limiter's groups (a mail provider per egress, src/engine/sessions/host-limiter.ts): a cap
 * over all of a group's hosts and a pace of opens in any second, with the time injected; hosts of
 * no group keep only their own caps.
 */
import { describe, expect, it } from 'vitest';
import { HostLimiter } from '../../src/engine/sessions/host-limiter.js';

function limiter(now: { ms: number }): HostLimiter {
  return new HostLimiter(
    {
      concurrency: 100,
      perHostConcurrency: 2,
      backoffBaseMs: 10,
      backoffMaxMs: 100,
      providerConcurrency: 3,
      providerSessionsPerSecond: 4,
    },
    () => now.ms,
  );
}

describe('host limiter groups', () => {
  it('caps the sessions of a group across its hosts, each host keeping its own cap', () => {
    const now = { ms: 1_000_000 };
    const l = limiter(now);
    const g = 'provider:microsoft';
    l.acquire('10.0.0.1', g);
    l.acquire('10.0.0.1', g);
    expect(l.canOpen('10.0.0.1', g)).toBe(false); // the host's cap
    expect(l.canOpen('10.0.0.2', g)).toBe(true);
    l.acquire('10.0.0.2', g);
    expect(l.canOpen('10.0.0.3', g)).toBe(false); // the group's cap
    expect(l.canOpen('10.0.0.3')).toBe(true); // a host of no group
    l.release('10.0.0.1', g);
    expect(l.canOpen('10.0.0.3', g)).toBe(true);
  });

  it('counts reservations against the group until they end', () => {
    const now = { ms: 1_000_000 };
    const l = limiter(now);
    const g = 'provider:google';
    l.reserve('10.0.0.1', g);
    l.reserve('10.0.0.2', g);
    l.reserve('10.0.0.3', g);
    expect(l.groupPending(g)).toBe(3);
    expect(l.canOpen('10.0.0.4', g)).toBe(false);
    l.endReservation('10.0.0.1', false, g);
    expect(l.canOpen('10.0.0.4', g)).toBe(true);
    l.endReservation('10.0.0.2', true, g);
    expect(l.groupActive(g)).toBe(1);
  });

  it('opens at most the pace’s sessions in any second, and says when the next may open', () => {
    const now = { ms: 1_000_000 };
    const l = limiter(now);
    const g = 'provider:yahoo';
    for (let i = 0; i < 4; i++) {
      now.ms += 100;
      expect(l.canOpen(`10.0.1.${i}`, g)).toBe(true);
      l.acquire(`10.0.1.${i}`, g);
      l.release(`10.0.1.${i}`, g);
    }
    expect(l.canOpen('10.0.1.9', g)).toBe(false);
    expect(l.groupPacedUntil(g)).toBe(1_000_100 + 1_000);
    now.ms = 1_000_100 + 999;
    expect(l.canOpen('10.0.1.9', g)).toBe(false);
    now.ms = 1_000_100 + 1_000;
    expect(l.canOpen('10.0.1.9', g)).toBe(true);
    expect(l.groupPacedUntil(g)).toBe(0);
  });
});
