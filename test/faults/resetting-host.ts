/**
 * A mail host that accepts every TCP connection and drops it at once, before any banner: with a
 * TCP reset (`rst`) or a plain close (`fin`). What an overloaded MTA, a half-configured load
 * balancer or a firewall that kills port 25 after the handshake looks like to the prober.
 * Misbehaving below SMTP, so a handler of the kit's raw SMTP server (test/kit/smtp-core.ts), like
 * the silent hosts of test/kit/smtp-servers.ts.
 */
import { startSmtpCore } from '../kit/smtp-core.js';

export type DropMode = 'rst' | 'fin';

export interface ResettingHost {
  readonly ip: string;
  readonly port: number;
  /** performance.now() of every accepted connection, in order. */
  readonly acceptedAt: number[];
  close(): Promise<void>;
}

/** Listens on `ip:port` (exclusive); rejects with EADDRINUSE when the port is taken there. */
export async function startResettingHost(ip: string, port: number, mode: DropMode): Promise<ResettingHost> {
  const acceptedAt: number[] = [];
  const core = await startSmtpCore({
    hosts: [ip],
    port,
    connection(conn) {
      acceptedAt.push(performance.now());
      if (mode === 'rst') conn.socket.resetAndDestroy();
      else conn.socket.destroy();
    },
  });
  return { ip, port: core.port, acceptedAt, close: () => core.close() };
}
