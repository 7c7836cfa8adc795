/**
 * Postfix-like MX hosts for the session broker's tests (test/engine/session-broker.test.ts and the
 * Redis ones): `shared.test` at one host and, when given, `other.test` at another, whose mailboxes
 * are the addresses starting with `bulk` or `single` (any other is refused as unknown).
 */
import type { FakeDnsServer } from './dns-server.js';
import { startDnsServer } from './dns-server.js';
import type { PostfixLikeMta } from './postfix-like-mta.js';
import { startPostfixLikeMta } from './postfix-like-mta.js';

export interface SharedHostLab {
  mta: PostfixLikeMta;
  dns: FakeDnsServer;
}

export async function startSharedHostLab(options: {
  shared: string;
  other?: string;
  /** Postfix's in_flow_delay paid by every transaction. */
  inFlowDelayMs: number;
}): Promise<SharedHostLab> {
  const { shared, other } = options;
  const mta = await startPostfixLikeMta({
    hosts: other === undefined ? [shared] : [shared, other],
    inFlowDelayMs: options.inFlowDelayMs,
    rcpt: (address) =>
      /^(bulk|single)/.test(address)
        ? '250 2.1.5 Ok'
        : `550 5.1.1 <${address}>: Recipient address rejected: User unknown`,
  });
  const dns = await startDnsServer({
    'shared.test': { mx: [{ exchange: 'mx.shared.test', priority: 10 }] },
    'mx.shared.test': { a: [shared] },
    ...(other === undefined
      ? {}
      : {
          'other.test': { mx: [{ exchange: 'mx.other.test', priority: 10 }] },
          'mx.other.test': { a: [other] },
        }),
  });
  return { mta, dns };
}
