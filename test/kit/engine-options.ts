/** Engine options for tests that verify against the in-process DNS server and SMTP kit. */
import type { EngineOptions } from '../../src/engine/types.js';

/**
 * DNS timeouts short enough for a silent server's test to end within a few seconds, and long
 * enough (two tries of a second) that a loaded machine, whose event loop can stall for hundreds of
 * milliseconds with the in-process DNS server's answer waiting, does not turn an answered query
 * into a timeout (CI once saw `dns_error` for a routed domain at 300 ms and one try); the kit's
 * SMTP port, and a probe identity under `.test`.
 */
export function kitEngineOptions(dnsAddress: string, smtpPort: number): EngineOptions {
  return {
    dns: { servers: [dnsAddress], timeoutMs: 1_000, tries: 2, positiveTtlMs: 60_000, negativeTtlMs: 60_000 },
    smtp: {
      port: smtpPort,
      heloName: 'probe.mailverdict.test',
      mailFrom: 'verify@probe.mailverdict.test',
      proxies: [],
      maxMxHosts: 3,
    },
    catchAllTtlMs: 60_000,
  };
}
