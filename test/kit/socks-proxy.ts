/**
 * A minimal RFC 1928 SOCKS5 proxy without authentication for the doctor's tests, whose onward
 * connections leave from `exitAddress`: mail servers see that address, not the prober's, as a real
 * proxy's exit address. Loopback only: it refuses to connect anywhere else.
 * (test/engine/probe.test.ts has one with username/password authentication; both belong in
 * test/kit/ once the kits are merged.)
 */
import net from 'node:net';

export interface SocksProxy {
  /** `socks5://127.0.0.1:PORT`. */
  readonly url: string;
  close(): Promise<void>;
}

export async function startSocksProxy(exitAddress: string): Promise<SocksProxy> {
  const sockets = new Set<net.Socket>();
  const track = (socket: net.Socket): void => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
  };
  const server = net.createServer((client) => {
    track(client);
    client.on('error', () => undefined);
    let buffer = Buffer.alloc(0);
    let stage: 'greeting' | 'request' | 'piped' = 'greeting';
    client.on('data', (chunk: Buffer) => {
      if (stage === 'piped') return;
      buffer = Buffer.concat([buffer, chunk]);
      if (stage === 'greeting' && buffer.length >= 2 && buffer.length >= 2 + buffer[1]!) {
        const methods = buffer.subarray(2, 2 + buffer[1]!);
        buffer = buffer.subarray(2 + buffer[1]!);
        if (!methods.includes(0x00)) return void client.end(Buffer.from([5, 0xff]));
        client.write(Buffer.from([5, 0x00]));
        stage = 'request';
      }
      // CONNECT to an IPv4 address: VER CMD RSV ATYP=1 ADDR(4) PORT(2).
      if (stage === 'request' && buffer.length >= 10 && buffer[3] === 1) {
        const host = `${buffer[4]}.${buffer[5]}.${buffer[6]}.${buffer[7]}`;
        const port = buffer.readUInt16BE(8);
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
  return {
    url: `socks5://127.0.0.1:${(server.address() as net.AddressInfo).port}`,
    close: async () => {
      for (const socket of sockets) socket.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
