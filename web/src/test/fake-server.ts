/**
 * A fake of the dashboard API at the network edge: `fetch` answers from a table of routes
 * ("GET /keys" → handler), with the real envelope, status codes and request ids, and records every
 * call (method, path, query, headers, body) so a test can check what the app sent.
 */
import type { SessionView } from '../api/contract';

export interface Call {
  method: string;
  path: string;
  query: URLSearchParams;
  headers: Record<string, string>;
  /** Parsed JSON, or the raw text of any other body. */
  body: unknown;
  contentType: string | null;
}

export interface Reply {
  status?: number;
  body?: unknown;
  headers?: Record<string, string>;
}

export type Handler = (call: Call, params: Record<string, string>) => Reply | Promise<Reply>;

let requests = 0;

/** jsdom's Blob has no text(): read it as a browser of 2015 would. */
function readText(blob: Blob): Promise<string> {
  return new Promise((resolve, reject) => {
    const reader = new FileReader();
    reader.onload = () => resolve(reader.result as string);
    reader.onerror = () => reject(reader.error ?? new Error('could not read the body'));
    reader.readAsText(blob);
  });
}
export const nextRequestId = () => `req_${(++requests).toString(16).padStart(32, '0')}`;

/** The envelope of a failed call, as the server writes it. */
export function failure(status: number, code: string, message: string): Reply {
  return { status, body: { error: code, message } };
}

export const ok = (body: unknown, status = 200): Reply => ({ status, body });

export function session(overrides: Partial<SessionView> = {}): SessionView {
  return {
    person: { id: 'per_owner', email: 'owner@example.com', operator: false },
    memberships: [
      {
        account_id: 'acc_1',
        member_id: 'mem_owner',
        plan: 'starter',
        notification_email: 'owner@example.com',
        role: 'owner',
        current: true,
      },
    ],
    member: {
      id: 'mem_owner',
      email: 'owner@example.com',
      role: 'owner',
      created_at: '2026-01-01T00:00:00.000Z',
      joined_at: '2026-01-01T00:00:00.000Z',
    },
    account: { id: 'acc_1', plan: 'starter', notification_email: 'owner@example.com' },
    csrf_token: 'csrf-token-1',
    expires_at: '2026-01-08T00:00:00.000Z',
    two_factor: { enabled: false, required: false },
    ...overrides,
  };
}

function matcher(pattern: string) {
  const [method, path] = pattern.split(' ') as [string, string];
  const names: string[] = [];
  const regex = new RegExp(
    `^${path.replace(/:([a-z_]+)/g, (_, name: string) => {
      names.push(name);
      return '([^/]+)';
    })}$`,
  );
  return (call: Call) => {
    if (call.method !== method) return null;
    const found = regex.exec(call.path);
    if (!found) return null;
    return Object.fromEntries(names.map((name, i) => [name, decodeURIComponent(found[i + 1] ?? '')]));
  };
}

export class FakeServer {
  readonly calls: Call[] = [];
  private readonly routes: { match: ReturnType<typeof matcher>; handler: Handler }[] = [];

  constructor(routes: Record<string, Handler | Reply> = {}) {
    this.on('GET /session', () => ok(session()));
    for (const [pattern, handler] of Object.entries(routes)) this.on(pattern, handler);
  }

  /** Adds or replaces a route (the latest wins). */
  on(pattern: string, handler: Handler | Reply): this {
    this.routes.unshift({
      match: matcher(pattern),
      handler: typeof handler === 'function' ? handler : () => handler,
    });
    return this;
  }

  /** Calls made to `method path` (path without /dashboard/api). */
  callsTo(method: string, path: string): Call[] {
    return this.calls.filter((call) => call.method === method && call.path === path);
  }

  readonly fetch = async (input: string, init: RequestInit = {}): Promise<Response> => {
    const url = new URL(input, 'http://dashboard.test');
    const headers = Object.fromEntries(
      Object.entries((init.headers ?? {}) as Record<string, string>).map(([k, v]) => [k.toLowerCase(), v]),
    );
    const contentType = headers['content-type'] ?? null;
    let body: unknown = undefined;
    if (init.body instanceof Blob) body = await readText(init.body);
    else if (typeof init.body === 'string')
      body = contentType === 'application/json' ? JSON.parse(init.body) : init.body;
    const call: Call = {
      method: init.method ?? 'GET',
      path: url.pathname.replace(/^\/dashboard\/api/, ''),
      query: url.searchParams,
      headers,
      body,
      contentType,
    };
    this.calls.push(call);
    const requestId = nextRequestId();
    for (const route of this.routes) {
      const params = route.match(call);
      if (!params) continue;
      const reply = await route.handler(call, params);
      const status = reply.status ?? 200;
      const payload =
        status >= 400 && reply.body && typeof reply.body === 'object'
          ? { ...reply.body, request_id: requestId }
          : reply.body;
      return new Response(status === 204 || payload === undefined ? null : JSON.stringify(payload), {
        status,
        headers: { 'content-type': 'application/json', 'x-request-id': requestId, ...reply.headers },
      });
    }
    return new Response(
      JSON.stringify({ error: 'not_found', message: 'no such route', request_id: requestId }),
      { status: 404, headers: { 'content-type': 'application/json', 'x-request-id': requestId } },
    );
  };
}
