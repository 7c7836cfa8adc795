/**
 * A loopback TCP proxy in front of a server (PostgreSQL, Redis) that a test can cut and restore:
 * cut resets every connection through it and refuses new ones, as when the server restarts;
 * start(port) on the same port brings it back.
 */
import { connect, createServer, type Server, type Socket } from 'node:net';

export class CuttableProxy {
  readonly #target: { host: string; port: number };
  readonly #sockets = new Set<Socket>();
  #server: Server | null = null;
  port = 0;

  constructor(target: { host: string; port: number }) {
    this.#target = target;
  }

  async start(port = 0): Promise<void> {
    const server = createServer((client) => {
      const upstream = connect(this.#target.port, this.#target.host);
      for (const s of [client, upstream]) {
        this.#sockets.add(s);
        s.on('close', () => this.#sockets.delete(s));
        s.on('error', () => {});
      }
      client.pipe(upstream).pipe(client);
    });
    await new Promise<void>((resolve) => server.listen(port, '127.0.0.1', resolve));
    this.port = (server.address() as { port: number }).port;
    this.#server = server;
  }

  async cut(): Promise<void> {
    const server = this.#server;
    this.#server = null;
    for (const s of this.#sockets) s.resetAndDestroy();
    if (server) await new Promise((resolve) => server.close(resolve));
  }
}

/** `url` with its host and port replaced by the proxy's. */
export function throughProxy(url: string, proxy: CuttableProxy): string {
  const u = new URL(url);
  u.hostname = '127.0.0.1';
  u.port = String(proxy.port);
  return u.toString();
}

/** The proxy for the server `url` names (default port `defaultPort`), started. */
export async function proxyFor(url: string, defaultPort: number): Promise<CuttableProxy> {
  const u = new URL(url);
  const proxy = new CuttableProxy({ host: u.hostname, port: Number(u.port || defaultPort) });
  await proxy.start();
  return proxy;
}
