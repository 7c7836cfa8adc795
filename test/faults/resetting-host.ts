/**
 * A mail host that accepts every TCP connection and drops it at once, before any banner: with a
 * TCP reset (`rst`) or a plain close (`fin`). What an overloaded MTA, a half-configured load
 * balancer or a firewall that kills port 25 after the handshake looks like to the prober.
 * Misbehaving below SMTP, so a raw `net` server, like the silent hosts of test/kit/smtp-servers.ts.
 */
import net from 'node:net';

export type DropMode = 'rst' | 'fin';

export interface ResettingHost {
  readonly ip: string;
  readonly port: number;
  /** performance.now() of every accepted connection, in order. */
  readonly acceptedAt: number[];
  close(): Promise<void>;
}

/** Listens on `ip:port` (exclusive); rejects with EADDRINUSE when the port is taken there. */
export function startResettingHost(ip: string, port: number, mode: DropMode): Promise<ResettingHost> {
  const acceptedAt: number[] = [];
  const server = net.createServer((socket) => {
    acceptedAt.push(performance.now());
    socket.on('error', () => undefined);
    if (mode === 'rst') socket.resetAndDestroy();
    else socket.destroy();
  });
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen({ host: ip, port, exclusive: true }, () => {
      server.off('error', reject);
      resolve({
        ip,
        port: (server.address() as net.AddressInfo).port,
        acceptedAt,
        close: () => new Promise<void>((done) => server.close(() => done())),
      });
    });
  });
}
