/** Engine options for tests that verify against the in-process DNS server and SMTP kit. */
import type { EngineOptions } from '../../src/engine/types.js';

/** Short DNS timeouts, the kit's SMTP port, and a probe identity under `.test`. */
export function kitEngineOptions(dnsAddress: string, smtpPort: number): EngineOptions {
  return {
    dns: { servers: [dnsAddress], timeoutMs: 300, tries: 1, positiveTtlMs: 60_000, negativeTtlMs: 60_000 },
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
