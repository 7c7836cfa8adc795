/**
 * A minimal SMTP responder for the engine benchmark, run as a child process (forked with IPC) so
 * that its CPU time is not the engine's. It speaks just enough SMTP for a probe: banner, EHLO
 * (multi-line), HELO, MAIL, RCPT, RSET, NOOP, QUIT. RCPT accepts local parts starting with
 * "user" and rejects every other one with 550 5.1.1.
 *
 *   --host 127.0.0.1    address to listen on (loopback only)
 *   --latency-ms 20     delay before every reply, the banner included
 *   --pipelining off    do not advertise PIPELINING (RFC 2920; advertised by default, as by
 *                       most real MTAs)
 *
 * Messages: sends {type:'ready', port} once listening; answers {type:'stats'} with the number of
 * sessions and of replies per command; exits when its parent goes away.
 */
import net from 'node:net';
import { parseArgs } from 'node:util';

const { values } = parseArgs({
  options: {
    host: { type: 'string', default: '127.0.0.1' },
    'latency-ms': { type: 'string', default: '0' },
    pipelining: { type: 'string', default: 'on' },
  },
});
const latencyMs = Number(values['latency-ms']);
const host = values.host;

const replies: Record<string, number> = {};
let sessions = 0;

function count(kind: string): void {
  replies[kind] = (replies[kind] ?? 0) + 1;
}

const EHLO_REPLY = [
  '250-fake-mta.bench.test',
  '250-SIZE 35882577',
  ...(values.pipelining === 'off' ? [] : ['250-PIPELINING']),
  '250-8BITMIME',
  '250 ENHANCEDSTATUSCODES',
  '',
].join('\r\n');

function replyTo(line: string): { text: string; close: boolean; kind: string } {
  const verb = line.slice(0, 4).toUpperCase();
  switch (verb) {
    case 'EHLO':
      return { text: EHLO_REPLY, close: false, kind: 'EHLO' };
    case 'HELO':
      return { text: '250 fake-mta.bench.test\r\n', close: false, kind: 'HELO' };
    case 'MAIL':
      return { text: '250 2.1.0 OK\r\n', close: false, kind: 'MAIL' };
    case 'RCPT': {
      const local = /<([^@>]*)@/.exec(line)?.[1] ?? '';
      return local.startsWith('user')
        ? { text: '250 2.1.5 OK\r\n', close: false, kind: 'RCPT' }
        : { text: '550 5.1.1 user unknown\r\n', close: false, kind: 'RCPT' };
    }
    case 'RSET':
      return { text: '250 2.0.0 OK\r\n', close: false, kind: 'RSET' };
    case 'NOOP':
      return { text: '250 2.0.0 OK\r\n', close: false, kind: 'NOOP' };
    case 'QUIT':
      return { text: '221 2.0.0 Bye\r\n', close: true, kind: 'QUIT' };
    default:
      return { text: '502 5.5.2 command not implemented\r\n', close: false, kind: 'other' };
  }
}

const server = net.createServer((socket) => {
  sessions += 1;
  socket.setNoDelay(true);
  socket.on('error', () => socket.destroy());

  // Equal delays keep replies in command order: timers of one duration fire in creation order.
  const send = (text: string, close: boolean): void => {
    const write = (): void => {
      if (socket.destroyed) return;
      if (close) socket.end(text);
      else socket.write(text);
    };
    if (latencyMs > 0) setTimeout(write, latencyMs);
    else write();
  };

  count('banner');
  send('220 fake-mta.bench.test ESMTP ready\r\n', false);

  let buffered = '';
  socket.setEncoding('latin1');
  socket.on('data', (chunk: string) => {
    buffered += chunk;
    // Replies to a pipelined group go out in one write, as real MTAs flush them (RFC 2920 §3.1).
    let out = '';
    let close = false;
    let end: number;
    while (!close && (end = buffered.indexOf('\r\n')) >= 0) {
      const line = buffered.slice(0, end);
      buffered = buffered.slice(end + 2);
      const reply = replyTo(line);
      count(reply.kind);
      out += reply.text;
      close = reply.close;
    }
    if (out !== '') send(out, close);
  });
});

server.listen(0, host, () => {
  const address = server.address();
  const port = typeof address === 'object' && address !== null ? address.port : 0;
  process.send?.({ type: 'ready', port });
});

process.on('message', (message: { type?: string }) => {
  if (message.type === 'stats') process.send?.({ type: 'stats', sessions, replies });
});
process.on('disconnect', () => {
  server.close();
  process.exit(0);
});
