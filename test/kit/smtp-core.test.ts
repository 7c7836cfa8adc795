/**
 * The kit's raw SMTP server: lines per read, replies, STARTTLS with the kit's certificate, the
 * tally, and connections open at once as the server counts them.
 */
import { once } from 'node:events';
import net from 'node:net';
import tls from 'node:tls';
import { afterEach, describe, expect, it } from 'vitest';
import { startSmtpCore, type SmtpConnection, type SmtpCore } from './smtp-core.js';

let core: SmtpCore | undefined;
afterEach(async () => {
  await core?.close();
  core = undefined;
});

/** Reads from `socket` until `done` says what came is enough (the socket stays open). */
function readUntil(socket: net.Socket, done: (text: string) => boolean): Promise<string> {
  return new Promise((resolve, reject) => {
    let text = '';
    const onData = (chunk: Buffer): void => {
      text += chunk.toString('latin1');
      if (!done(text)) return;
      socket.off('data', onData);
      socket.off('error', reject);
      resolve(text);
    };
    socket.on('data', onData);
    socket.once('error', reject);
  });
}

/** A host that answers each line with `250 <line>`, one write per read, and STARTTLS with 220. */
function echo(reads: string[][]): (conn: SmtpConnection) => { lines(lines: string[]): void } {
  return (conn) => {
    conn.enter();
    conn.write('220 core.test\r\n');
    return {
      lines(lines) {
        if (lines.length > 0) reads.push(lines);
        if (lines[0] === 'STARTTLS') {
          conn.write('220 go ahead\r\n');
          conn.startTls();
          return;
        }
        const out = lines.map((line) => (line === 'QUIT' ? '221 bye' : `250 ${line}`)).join('\r\n');
        if (out !== '') conn.send(out + '\r\n', 0, lines.includes('QUIT'));
      },
    };
  };
}

describe('smtp core', () => {
  it('hands over the lines of one read together and counts the sessions open at once per host', async () => {
    const reads: string[][] = [];
    core = await startSmtpCore({ hosts: ['127.0.0.2', '127.0.0.3'], connection: echo(reads) });
    const a = net.connect(core.port, '127.0.0.2');
    const b = net.connect(core.port, '127.0.0.2');
    const c = net.connect(core.port, '127.0.0.3');
    await Promise.all([a, b, c].map((s) => readUntil(s, (t) => t.includes('220'))));
    a.write('MAIL FROM:<>\r\nRCPT TO:<x@y>\r\nQUIT\r\n');
    expect(await readUntil(a, (t) => t.includes('221'))).toBe(
      '250 MAIL FROM:<>\r\n250 RCPT TO:<x@y>\r\n221 bye\r\n',
    );
    expect(reads).toEqual([['MAIL FROM:<>', 'RCPT TO:<x@y>', 'QUIT']]);
    const tally = core.tally();
    expect(tally.connections).toBe(3);
    expect(tally.peakConcurrentByHost).toEqual({ '127.0.0.2': 2, '127.0.0.3': 1 });
    expect(tally.peakConcurrent).toBe(3);
    expect(core.openFrom('127.0.0.2', '127.0.0.1')).toBe(2);
    for (const s of [a, b, c]) s.destroy();
  });

  it('upgrades to TLS with the kit certificate after STARTTLS', async () => {
    const reads: string[][] = [];
    core = await startSmtpCore({ hosts: ['127.0.0.2'], connection: echo(reads) });
    const raw = net.connect(core.port, '127.0.0.2');
    await readUntil(raw, (t) => t.includes('220 core.test'));
    raw.write('STARTTLS\r\n');
    await readUntil(raw, (t) => t.includes('220 go ahead'));
    const secure = tls.connect({ socket: raw, rejectUnauthorized: false });
    await once(secure, 'secureConnect');
    secure.write('EHLO over-tls\r\n');
    expect(await readUntil(secure, (t) => t.endsWith('\r\n'))).toBe('250 EHLO over-tls\r\n');
    expect(reads).toEqual([['STARTTLS'], ['EHLO over-tls']]);
    secure.destroy();
  });

  it('counts a connection from the client socket until the server lets go of it', async () => {
    // The server lets go at QUIT (its close) or at the client's FIN (half-open: it does not close).
    let finRead = (): void => undefined;
    core = await startSmtpCore({
      hosts: ['127.0.0.2'],
      allowHalfOpen: true,
      connection: (conn) => {
        conn.write('220 core.test\r\n');
        return {
          lines: (lines) => (lines.includes('QUIT') ? conn.end('221 bye\r\n') : undefined),
          end: () => finRead(),
        };
      },
    });
    const session = async (leave: (socket: net.Socket) => void): Promise<net.Socket> => {
      const socket = net.connect(core!.port, '127.0.0.2');
      await readUntil(socket, (t) => t.includes('220'));
      leave(socket);
      return socket;
    };
    // One after the other: each next socket is created once the server has closed the last one.
    for (let i = 0; i < 3; i++) {
      const socket = await session((s) => s.write('QUIT\r\n'));
      await once(socket, 'end');
      socket.destroy();
    }
    const read = new Promise<void>((resolve) => (finRead = resolve));
    const fin = await session((s) => s.end());
    await read;
    expect(core.peakConnected('127.0.0.2')).toBe(1);
    // A socket created while the server still holds another counts with it.
    const held = await session(() => undefined);
    const next = await session(() => undefined);
    expect(core.peakConnected('127.0.0.2')).toBe(2);
    for (const s of [fin, held, next]) s.destroy();
  });
});
