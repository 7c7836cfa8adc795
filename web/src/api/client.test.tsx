import { screen, waitFor } from '@testing-library/react';
import { describe, expect, it, vi } from 'vitest';
import { FakeServer, failure, ok } from '../test/fake-server';
import { renderApp } from '../test/render';
import { ApiError, createApiClient, describeError } from './client';

function client(server: FakeServer, token: string | null = 'csrf-abc', onUnauthenticated = vi.fn()) {
  return createApiClient({ fetch: server.fetch, csrfToken: () => token, onUnauthenticated });
}

describe('the dashboard API client', () => {
  it('turns the error envelope into a message that quotes the request id', async () => {
    const server = new FakeServer({ 'POST /keys/:id/revoke': failure(404, 'not_found', 'No such key.') });
    const error = await client(server)
      .request('/keys/key_1/revoke', { method: 'POST' })
      .catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(ApiError);
    const apiError = error as ApiError;
    expect(apiError).toMatchObject({ status: 404, code: 'not_found', message: 'No such key.' });
    expect(apiError.requestId).toMatch(/^req_[0-9a-f]{32}$/);
    expect(describeError('Could not revoke the key', error)).toBe(
      `Could not revoke the key: No such key. (request ${apiError.requestId})`,
    );
  });

  it('reads the v1 envelope too (a code string beside the message)', async () => {
    const server = new FakeServer({
      'GET /odd': { status: 429, body: { error: 'rate_limit_exceeded', message: 'Slow down.' } },
    });
    const error = (await client(server)
      .request('/odd')
      .catch((caught: unknown) => caught)) as ApiError;
    expect(error).toMatchObject({ status: 429, code: 'rate_limit_exceeded', message: 'Slow down.' });
  });

  it('says the status when the body is not JSON', async () => {
    const fetch = async () =>
      new Response('<html>Bad gateway</html>', { status: 502, statusText: 'Bad Gateway' });
    const api = createApiClient({ fetch, csrfToken: () => null, onUnauthenticated: vi.fn() });
    await expect(api.request('/overview')).rejects.toMatchObject({
      status: 502,
      message: 'the server answered 502 Bad Gateway',
      requestId: null,
    });
  });

  it('sends the CSRF token on every state-changing request and never on a read', async () => {
    const server = new FakeServer({
      'GET /keys': ok({}),
      'POST /keys': ok({}, 201),
      'DELETE /session': { status: 204 },
    });
    const api = client(server, 'token-xyz');
    await api.request('/keys');
    await api.request('/keys', { method: 'POST', body: { name: 'a' } });
    await api.request('/session', { method: 'DELETE' });
    const [read, create, signOut] = server.calls;
    expect(read?.headers['x-csrf-token']).toBeUndefined();
    expect(create?.headers['x-csrf-token']).toBe('token-xyz');
    expect(create?.contentType).toBe('application/json');
    expect(create?.body).toEqual({ name: 'a' });
    expect(signOut?.headers['x-csrf-token']).toBe('token-xyz');
  });

  it('reports a lost session (401 unauthenticated) and nothing else', async () => {
    const onUnauthenticated = vi.fn();
    const server = new FakeServer({
      'GET /overview': failure(401, 'unauthenticated', 'Sign in first.'),
      'POST /session': failure(401, 'invalid_credentials', 'Wrong e-mail or password.'),
    });
    const api = client(server, null, onUnauthenticated);
    await expect(api.request('/session', { method: 'POST', body: {} })).rejects.toBeInstanceOf(ApiError);
    expect(onUnauthenticated).not.toHaveBeenCalled();
    await expect(api.request('/overview')).rejects.toBeInstanceOf(ApiError);
    expect(onUnauthenticated).toHaveBeenCalledOnce();
  });
});

describe('the app and the session', () => {
  it('sends a visitor without a session to sign-in, and back to the page after signing in', async () => {
    const server = new FakeServer({ 'GET /session': failure(401, 'unauthenticated', 'No session.') });
    const app = renderApp('/keys', server);
    expect(await screen.findByRole('heading', { name: 'Sign in' })).toBeInTheDocument();
    expect(app.at()).toBe('/sign-in?next=%2Fkeys');

    server.on('POST /session', ok((await import('../test/fake-server')).session()));
    server.on('GET /keys', ok({ keys: [], active: 0, limit: 10, scopes: ['verify'] }));
    await app.user.type(screen.getByLabelText('E-mail'), 'owner@example.com');
    await app.user.type(screen.getByLabelText('Password'), 'correct horse battery');
    await app.user.click(screen.getByRole('button', { name: 'Sign in' }));

    expect(await screen.findByRole('heading', { name: 'API keys' })).toBeInTheDocument();
    expect(app.at()).toBe('/keys');
    expect(server.callsTo('POST', '/session')[0]?.body).toEqual({
      email: 'owner@example.com',
      password: 'correct horse battery',
    });
  });

  it('goes to sign-in when the session ends while a page is open', async () => {
    const server = new FakeServer({
      'GET /keys': failure(401, 'unauthenticated', 'Your session has expired.'),
    });
    const app = renderApp('/keys', server);
    expect(await screen.findByRole('heading', { name: 'Sign in' })).toBeInTheDocument();
    await waitFor(() => expect(app.at()).toMatch(/^\/sign-in/));
  });

  it('says in words why signing in failed, with the request id', async () => {
    const server = new FakeServer({
      'GET /session': failure(401, 'unauthenticated', 'No session.'),
      'POST /session': failure(401, 'invalid_credentials', 'Wrong e-mail or password.'),
    });
    const app = renderApp('/sign-in', server);
    await app.user.type(await screen.findByLabelText('E-mail'), 'who@example.com');
    await app.user.type(screen.getByLabelText('Password'), 'nope nope nope');
    await app.user.click(screen.getByRole('button', { name: 'Sign in' }));
    expect(await screen.findByRole('alert')).toHaveTextContent(
      /^Could not sign in: Wrong e-mail or password\. \(request req_[0-9a-f]{32}\)$/,
    );
  });

  it('signs out: ends the session on the server and shows sign-in', async () => {
    const server = new FakeServer({
      'GET /keys': ok({ keys: [], active: 0, limit: 10, scopes: ['verify'] }),
      'DELETE /session': { status: 204 },
    });
    const app = renderApp('/keys', server);
    await app.user.click(await screen.findByRole('button', { name: 'Sign out' }));
    expect(await screen.findByRole('heading', { name: 'Sign in' })).toBeInTheDocument();
    expect(server.callsTo('DELETE', '/session')).toHaveLength(1);
    expect(server.callsTo('DELETE', '/session')[0]?.headers['x-csrf-token']).toBe('csrf-token-1');
  });
});
