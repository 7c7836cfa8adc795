/**
 * One dashboard API request on a new connection from a chosen loopback client address (the
 * socket's `localAddress`), as a browser on another machine would make it: its own Origin, a
 * JSON body. For the sign-in bench and its flood child (bench/sign-in.bench.ts).
 */
import { request as httpRequest } from 'node:http';

export interface Answer {
  status: number;
  body: string;
  headers: Record<string, string | string[] | undefined>;
  /** From the request's start to the answer's last byte. */
  ms: number;
}

export function dashboardRequest(
  base: URL,
  from: string,
  method: 'GET' | 'POST' | 'DELETE',
  path: string,
  options: { body?: unknown; headers?: Record<string, string> } = {},
): Promise<Answer> {
  const started = performance.now();
  return new Promise((resolve, reject) => {
    const payload = options.body === undefined ? undefined : JSON.stringify(options.body);
    const req = httpRequest(
      {
        host: base.hostname,
        port: base.port,
        localAddress: from,
        agent: false,
        method,
        path: `/dashboard/api/${path}`,
        timeout: 30_000,
        headers: {
          origin: base.origin,
          'sec-fetch-site': 'same-origin',
          ...(payload === undefined
            ? {}
            : { 'content-type': 'application/json', 'content-length': String(Buffer.byteLength(payload)) }),
          ...options.headers,
        },
      },
      (res) => {
        let text = '';
        res.setEncoding('utf8').on('data', (c: string) => (text += c));
        res.on('end', () =>
          resolve({
            status: res.statusCode!,
            body: text,
            headers: res.headers,
            ms: performance.now() - started,
          }),
        );
      },
    );
    req.on('timeout', () => req.destroy(new Error(`${method} ${path} took over 30 s`)));
    req.on('error', reject);
    req.end(payload);
  });
}
