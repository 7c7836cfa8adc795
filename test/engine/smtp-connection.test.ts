import net from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { SmtpConnection, SmtpConnectionError, parseProxyUrl } from '../../src/engine/smtp/connection.js';

/** A one-off server on 127.0.0.1 that runs `script` for each connection. */
const servers: net.Server[] = [];
const sockets = new Set<net.Socket>();

async function serve(
  script: (socket: net.Socket, lines: AsyncIterable<string>) => Promise<void> | void,
): Promise<number> {
  const server = net.createServer((socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
    socket.on('error', () => undefined);
    socket.setEncoding('utf8');
    // The client hanging up ends the line iterator with an error: that is how these scripts end.
    Promise.resolve()
      .then(() => script(socket, linesOf(socket)))
      .catch(() => undefined);
  });
  servers.push(server);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return (server.address() as net.AddressInfo).port;
}

async function* linesOf(socket: net.Socket): AsyncIterable<string> {
  let pending = '';
  for await (const chunk of socket) {
    pending += chunk as string;
    let newline = pending.indexOf('\r\n');
    while (newline !== -1) {
      yield pending.slice(0, newline);
      pending = pending.slice(newline + 2);
      newline = pending.indexOf('\r\n');
    }
  }
}

afterEach(async () => {
  for (const socket of sockets) socket.destroy();
  await Promise.all(servers.splice(0).map((server) => new Promise((resolve) => server.close(resolve))));
});

function open(port: number, budgetMs = 2000): Promise<SmtpConnection> {
  return SmtpConnection.open({ address: '127.0.0.1', port, deadlineAt: performance.now() + budgetMs });
}

async function failureOf(promise: Promise<unknown>): Promise<SmtpConnectionError> {
  const error = await promise.then(
    () => null,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(SmtpConnectionError);
  return error as SmtpConnectionError;
}

describe('SmtpConnection', () => {
  it('reads a multi-line banner before resolving open', async () => {
    const port = await serve((socket) => {
      socket.write('220-mx.example.test ESMTP\r\n220 no UCE\r\n');
    });
    const connection = await open(port);
    expect(connection.banner).toMatchObject({ code: 220, lines: ['mx.example.test ESMTP', 'no UCE'] });
    connection.destroy();
  });

  it('fails with kind refused when nothing listens', async () => {
    const port = await serve(() => undefined);
    await new Promise((resolve) => servers.pop()!.close(resolve));
    expect((await failureOf(open(port))).kind).toBe('refused');
  });

  it('fails with kind timeout when the banner does not come before the deadline', async () => {
    const port = await serve(() => undefined);
    expect((await failureOf(open(port, 150))).kind).toBe('timeout');
  });

  it('answers pipelined commands in order, one promise per reply', async () => {
    const port = await serve(async (socket, lines) => {
      socket.write('220 ready\r\n');
      for await (const line of lines) socket.write(`250 got ${line}\r\n`);
    });
    const connection = await open(port);
    const replies = await Promise.all(
      connection.pipeline(['MAIL FROM:<a@b.test>', 'RCPT TO:<c@d.test>', 'NOOP']),
    );
    expect(replies.map((reply) => reply.message)).toEqual([
      'got MAIL FROM:<a@b.test>',
      'got RCPT TO:<c@d.test>',
      'got NOOP',
    ]);
    connection.destroy();
  });

  it('fails every pending reply with kind closed when the server hangs up', async () => {
    const port = await serve(async (socket, lines) => {
      socket.write('220 ready\r\n');
      for await (const line of lines) if (line.startsWith('RCPT')) socket.destroy();
    });
    const connection = await open(port);
    const [mail, rcpt] = connection.pipeline(['MAIL FROM:<a@b.test>', 'RCPT TO:<c@d.test>']);
    expect((await failureOf(mail!)).kind).toBe('closed');
    expect((await failureOf(rcpt!)).kind).toBe('closed');
  });

  it('treats a reply nobody asked for as a protocol error', async () => {
    const port = await serve(async (socket, lines) => {
      socket.write('220 ready\r\n');
      for await (const line of lines) socket.write(`250 ok ${line}\r\n250 and one more\r\n`);
    });
    const connection = await open(port);
    await connection.command('NOOP');
    expect((await failureOf(connection.command('NOOP'))).kind).toBe('protocol');
  });

  it('refuses clear-text replies smuggled after the 220 to STARTTLS', async () => {
    // CVE-2011-0411 style: text after "220 go ahead" must never be read as a TLS-protected reply.
    const port = await serve(async (socket, lines) => {
      socket.write('220 ready\r\n');
      for await (const line of lines) {
        if (line.startsWith('EHLO')) socket.write('250-mx\r\n250 STARTTLS\r\n');
        else if (line === 'STARTTLS') socket.write('220 go ahead\r\n250 injected\r\n');
      }
    });
    const connection = await open(port);
    await connection.ehlo('probe.test');
    const error = await failureOf(connection.starttls('mx.example.test'));
    expect(error.kind).toBe('protocol');
    expect(connection.tls).toBe(false);
  });

  it('falls back to HELO when EHLO is refused with 5xx, and forgets the extensions', async () => {
    const port = await serve(async (socket, lines) => {
      socket.write('220 ready\r\n');
      for await (const line of lines)
        socket.write(line.startsWith('EHLO') ? '500 what?\r\n' : '250 hello\r\n');
    });
    const connection = await open(port);
    const reply = await connection.ehlo('probe.test');
    expect(reply).toMatchObject({ code: 250, message: 'hello' });
    expect(connection.extensions.pipelining).toBe(false);
    connection.destroy();
  });

  it('fails with kind protocol on a peer that does not speak SMTP', async () => {
    const port = await serve((socket) => {
      socket.write('HTTP/1.1 400 Bad Request\r\n');
    });
    expect((await failureOf(open(port))).kind).toBe('protocol');
  });

  it('sends QUIT and closes without waiting for the 221', async () => {
    const received: string[] = [];
    const port = await serve(async (socket, lines) => {
      socket.write('220 ready\r\n');
      for await (const line of lines) received.push(line);
    });
    const connection = await open(port);
    connection.quit();
    expect(connection.usable).toBe(false);
    await expect.poll(() => received).toEqual(['QUIT']);
  });

  it('says whether the server closed after QUIT or the deadline ended the connection', async () => {
    const closing = await serve(async (socket, lines) => {
      socket.write('220 ready\r\n');
      for await (const line of lines) if (line === 'QUIT') socket.end('221 bye\r\n');
    });
    // A server that stays open even after the client's FIN (a hung one).
    const hung = net.createServer({ allowHalfOpen: true }, (socket) => {
      sockets.add(socket);
      socket.on('error', () => undefined);
      socket.write('220 ready\r\n');
    });
    servers.push(hung);
    await new Promise<void>((resolve) => hung.listen(0, '127.0.0.1', resolve));
    const silent = (hung.address() as net.AddressInfo).port;
    const ended = async (port: number): Promise<string | null> => {
      let closed: () => void = () => undefined;
      const gone = new Promise<void>((resolve) => (closed = resolve));
      const connection = await SmtpConnection.open({
        address: '127.0.0.1',
        port,
        deadlineAt: performance.now() + 2000,
        onClose: () => closed(),
      });
      expect(connection.ended).toBeNull();
      connection.setDeadline(performance.now() + 100);
      connection.quit();
      await gone;
      return connection.ended;
    };
    expect(await ended(closing)).toBe('destroyed');
    expect(await ended(silent)).toBe('timeout');
  });
});

describe('parseProxyUrl', () => {
  it('reads host, port and percent-encoded credentials', () => {
    expect(parseProxyUrl('socks5://us%40er:p%3Ass@10.0.0.1:1081')).toEqual({
      host: '10.0.0.1',
      port: 1081,
      userId: 'us@er',
      password: 'p:ss',
    });
  });

  it('defaults to port 1080 and no credentials', () => {
    expect(parseProxyUrl('socks5://proxy.example')).toEqual({ host: 'proxy.example', port: 1080 });
  });

  it('strips the brackets of an IPv6 host', () => {
    expect(parseProxyUrl('socks5://[::1]:9050').host).toBe('::1');
  });

  it('refuses anything that is not SOCKS5', () => {
    expect(() => parseProxyUrl('http://proxy.example:8080')).toThrow(/SOCKS5/);
  });
});
