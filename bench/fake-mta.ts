/**
 * A minimal SMTP responder for the engine benchmark, a handler of the kit's raw SMTP server
 * (test/kit/smtp-core.ts), run as a child process (forked with IPC) so that its CPU time is not
 * the engine's. It speaks just enough SMTP for a probe: banner, EHLO (multi-line), HELO, MAIL,
 * RCPT, RSET, NOOP, QUIT. RCPT accepts local parts starting with "user" and rejects every other
 * one with 550 5.1.1.
 *
 *   --host 127.0.0.1    address to listen on (loopback only)
 *   --latency-ms 20     delay before every reply, the banner included
 *   --pipelining off    do not advertise PIPELINING (RFC 2920; advertised by default, as by
 *                       most real MTAs)
 *
 * Messages: sends {type:'ready', port} once listening; answers {type:'stats'} with the number of
 * sessions and of replies per command; exits when its parent goes away.
 */
import { parseArgs } from 'node:util';
import { startSmtpCore } from '../test/kit/smtp-core.js';

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

const core = await startSmtpCore({
  hosts: [host],
  connection(conn) {
    sessions += 1;
    // Equal delays keep replies in command order: timers of one duration fire in creation order.
    count('banner');
    conn.send('220 fake-mta.bench.test ESMTP ready\r\n', latencyMs);
    return {
      lines(lines) {
        // Replies to a pipelined group go out in one write, as real MTAs flush them (RFC 2920 §3.1).
        let out = '';
        let close = false;
        for (const line of lines) {
          const reply = replyTo(line);
          count(reply.kind);
          out += reply.text;
          close = reply.close;
          if (close) break;
        }
        if (close) conn.stopReading();
        if (out !== '') conn.send(out, latencyMs, close);
      },
    };
  },
});
process.send?.({ type: 'ready', port: core.port });

process.on('message', (message: { type?: string }) => {
  if (message.type === 'stats') process.send?.({ type: 'stats', sessions, replies });
});
process.on('disconnect', () => {
  void core.close().then(() => process.exit(0));
});
