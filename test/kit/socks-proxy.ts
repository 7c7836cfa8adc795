/**
 * A minimal RFC 1928 SOCKS5 proxy for the tests: without authentication, or with RFC 1929
 * username/password when `credentials` are given. Its onward connections leave from
 * `exitAddress` when given, so that mail servers see that address, as a real proxy's exit
 * address. Loopback only: it refuses to connect anywhere else.
 */
import net from 'node:net';

export interface SocksProxyOptions {
  /** The address onward connections leave from (a loopback address). */
  exitAddress?: string;
  /** Require these credentials (method 0x02); without, no authentication (method 0x00). */
  credentials?: { user: string; password: string };
}

export interface SocksProxy {
  /** `socks5://127.0.0.1:PORT`. */
  readonly url: string;
  /** `socks5://user:password@127.0.0.1:PORT`. */
  urlWith(user: string, password: string): string;
  /** Every CONNECT asked, with the user who asked it ('' without authentication). */
  readonly connects: { user: string; host: string; port: number }[];
  close(): Promise<void>;
}

export async function startSocksProxy(options: SocksProxyOptions = {}): Promise<SocksProxy> {
  const { exitAddress, credentials } = options;
  const connects: SocksProxy['connects'] = [];
  const sockets = new Set<net.Socket>();
  const track = (socket: net.Socket): void => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
  };
  const server = net.createServer((client) => {
    track(client);
    client.on('error', () => undefined);
    let buffer = Buffer.alloc(0);
    let stage: 'greeting' | 'auth' | 'request' | 'piped' = 'greeting';
    let who = '';
    client.on('data', (chunk: Buffer) => {
      if (stage === 'piped') return;
      buffer = Buffer.concat([buffer, chunk]);
      if (stage === 'greeting' && buffer.length >= 2 && buffer.length >= 2 + buffer[1]!) {
        const methods = buffer.subarray(2, 2 + buffer[1]!);
        buffer = buffer.subarray(2 + buffer[1]!);
        const method = credentials === undefined ? 0x00 : 0x02;
        if (!methods.includes(method)) return void client.end(Buffer.from([5, 0xff]));
        client.write(Buffer.from([5, method]));
        stage = credentials === undefined ? 'request' : 'auth';
      }
      if (stage === 'auth' && buffer.length >= 2) {
        const ulen = buffer[1]!;
        const plen = buffer[2 + ulen];
        if (plen === undefined || buffer.length < 3 + ulen + plen) return;
        who = buffer.subarray(2, 2 + ulen).toString();
        const pass = buffer.subarray(3 + ulen, 3 + ulen + plen).toString();
        buffer = buffer.subarray(3 + ulen + plen);
        if (who !== credentials!.user || pass !== credentials!.password)
          return void client.end(Buffer.from([1, 1]));
        client.write(Buffer.from([1, 0]));
        stage = 'request';
      }
      // CONNECT to an IPv4 address: VER CMD RSV ATYP=1 ADDR(4) PORT(2).
      if (stage === 'request' && buffer.length >= 10 && buffer[3] === 1) {
        const host = `${buffer[4]}.${buffer[5]}.${buffer[6]}.${buffer[7]}`;
        const port = buffer.readUInt16BE(8);
        connects.push({ user: who, host, port });
        stage = 'piped';
        if (!host.startsWith('127.')) return void client.destroy();
        const upstream = net.connect({ host, port, localAddress: exitAddress }, () => {
          client.write(Buffer.from([5, 0, 0, 1, 0, 0, 0, 0, 0, 0]));
          client.pipe(upstream);
          upstream.pipe(client);
        });
        track(upstream);
        upstream.on('error', () => client.destroy());
      }
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as net.AddressInfo).port;
  return {
    url: `socks5://127.0.0.1:${port}`,
    urlWith: (user, password) => `socks5://${user}:${password}@127.0.0.1:${port}`,
    connects,
    close: async () => {
      for (const socket of sockets) socket.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
