import { screen, waitFor, within } from '@testing-library/react';
import { describe, expect, it } from 'vitest';
import type { CreateKeyBody, KeyItem, KeyList } from '../api/contract';
import { FakeServer, failure, ok } from '../test/fake-server';
import { renderApp } from '../test/render';

const SCOPES = ['verify', 'batch', 'usage:read'];
const WIDGET = { url: 'https://verify.example/widget.js', integrity: 'sha384-abc' };

function key(n: number, overrides: Partial<KeyItem> = {}): KeyItem {
  return {
    id: `key_${n}`,
    name: `Key ${n}`,
    kind: 'live',
    scopes: SCOPES,
    display: `svc_live_…${String(n).padStart(4, '0')}`,
    status: 'active',
    created_at: '2026-02-01T10:00:00.000Z',
    last_used_at: null,
    revoked_at: null,
    publishable: false,
    allowed_origins: [],
    visitor_rate_limit: null,
    key_rate_limit: null,
    daily_cap: null,
    cap_cost: null,
    ...overrides,
  };
}

/** A key store on the fake server: list, create, revoke, rotate, with the 10-key limit. */
function keyServer(initial: KeyItem[]) {
  let keys = [...initial];
  let created = 0;
  const list = (): KeyList => ({
    keys,
    active: keys.filter((k) => k.status === 'active').length,
    limit: 10,
    scopes: SCOPES,
    widget: WIDGET,
  });
  const server = new FakeServer({
    'GET /keys': () => ok(list()),
    'POST /keys': (call) => {
      if (list().active >= 10)
        return failure(409, 'key_limit_reached', 'An account can hold at most 10 active keys.');
      const body = call.body as CreateKeyBody;
      const item = key(100 + ++created, {
        name: body.name,
        kind: body.kind,
        scopes: body.scopes,
        publishable: body.publishable !== undefined,
        allowed_origins: body.publishable?.allowedOrigins ?? [],
      });
      keys = [item, ...keys];
      const pub = body.publishable ? 'pub_' : '';
      return ok({ key: item, secret: `svc_${body.kind}_${pub}SECRET${created}` }, 201);
    },
    'POST /keys/:id/revoke': (_, { id }) => {
      const found = keys.find((k) => k.id === id);
      if (!found) return failure(404, 'not_found', 'No such key.');
      found.status = 'revoked';
      found.revoked_at = '2026-02-02T10:00:00.000Z';
      return ok(found);
    },
    'POST /keys/:id/rotate': (_, { id }) => {
      const old = keys.find((k) => k.id === id);
      if (!old) return failure(404, 'not_found', 'No such key.');
      const item = key(100 + ++created, { name: old.name, kind: old.kind, scopes: old.scopes });
      keys = [item, ...keys];
      return ok({ key: item, secret: `svc_live_ROTATED${created}`, replaces: id }, 201);
    },
  });
  return server;
}

describe('API keys page', () => {
  it('creates a publishable key with its origins and shows the widget snippet with its integrity', async () => {
    const server = keyServer([key(1)]);
    const { user } = renderApp('/keys', server);
    await user.click(await screen.findByRole('button', { name: 'Create key' }));
    const form = await screen.findByRole('dialog', { name: 'Create an API key' });
    await user.type(within(form).getByLabelText('Name'), 'signup widget');
    await user.click(within(form).getByRole('checkbox', { name: 'Publishable key for web pages' }));
    await user.type(within(form).getByLabelText('Allowed origins'), 'https://shop.example');
    await user.click(within(form).getByRole('button', { name: 'Create key' }));

    const shown = await screen.findByRole('dialog', { name: 'Your new API key' });
    // Not a secret: where it goes, and no "keep it somewhere safe".
    expect(within(shown).getByLabelText('Publishable key')).toHaveValue('svc_live_pub_SECRET1');
    expect(shown).toHaveTextContent('goes in your web pages');
    expect(shown).toHaveTextContent('only from https://shop.example');
    expect(shown).not.toHaveTextContent(/somewhere safe/i);
    const snippet = within(shown).getByLabelText('Snippet');
    expect(snippet).toHaveValue(
      [
        '<script src="https://verify.example/widget.js" integrity="sha384-abc" crossorigin="anonymous"',
        '  data-key="svc_live_pub_SECRET1" defer></script>',
        '<input type="email" name="email" autocomplete="email" data-mailverdict>',
      ].join('\n'),
    );
    expect(server.callsTo('POST', '/keys')[0]?.body).toEqual({
      name: 'signup widget',
      kind: 'live',
      scopes: ['verify'],
      publishable: { allowedOrigins: ['https://shop.example'] },
    });
  });

  it('creates a key and shows its secret once, with a copy button', async () => {
    const server = keyServer([key(1)]);
    const { user } = renderApp('/keys', server);
    await user.click(await screen.findByRole('button', { name: 'Create key' }));
    const form = await screen.findByRole('dialog', { name: 'Create an API key' });
    await user.type(within(form).getByLabelText('Name'), 'signup form');
    await user.click(within(form).getByRole('radio', { name: /Test/ }));
    await user.click(within(form).getByRole('checkbox', { name: 'batch' }));
    await user.click(within(form).getByRole('button', { name: 'Create key' }));

    const shown = await screen.findByRole('dialog', { name: 'Your new API key' });
    expect(within(shown).getByLabelText('Secret')).toHaveValue('svc_test_SECRET1');
    expect(shown).toHaveTextContent('This is the only time the secret is shown');
    await user.click(within(shown).getByRole('button', { name: 'Copy' }));
    expect(await navigator.clipboard.readText()).toBe('svc_test_SECRET1');
    expect(within(shown).getByRole('status')).toHaveTextContent('Copied');

    const sent = server.callsTo('POST', '/keys')[0];
    expect(sent?.body).toEqual({ name: 'signup form', kind: 'test', scopes: ['verify', 'usage:read'] });
    expect(sent?.headers['x-csrf-token']).toBe('csrf-token-1');

    await user.click(within(shown).getByRole('button', { name: 'Done' }));
    await waitFor(() => expect(screen.queryByRole('dialog')).not.toBeInTheDocument());
    expect(document.body).not.toHaveTextContent('svc_test_SECRET1');
    expect(screen.getByRole('rowheader', { name: 'signup form' })).toBeInTheDocument();
    expect(screen.getByText('2 of 10 active keys')).toBeInTheDocument();
  });

  it('revokes a key only after confirmation, and shows it revoked', async () => {
    const server = keyServer([key(1), key(2)]);
    const { user } = renderApp('/keys', server);
    await user.click(await screen.findByRole('button', { name: 'Revoke Key 2' }));
    const confirm = await screen.findByRole('alertdialog', { name: 'Revoke the key Key 2?' });
    await user.click(within(confirm).getByRole('button', { name: 'Cancel' }));
    expect(server.callsTo('POST', '/keys/key_2/revoke')).toHaveLength(0);

    await user.click(screen.getByRole('button', { name: 'Revoke Key 2' }));
    await user.click(
      within(await screen.findByRole('alertdialog', { name: 'Revoke the key Key 2?' })).getByRole('button', {
        name: 'Revoke key',
      }),
    );
    await waitFor(() => expect(screen.queryByRole('alertdialog')).not.toBeInTheDocument());
    const row = screen.getByRole('rowheader', { name: 'Key 2' }).closest('tr') as HTMLElement;
    expect(within(row).getByText('Revoked')).toBeInTheDocument();
    expect(within(row).queryByRole('button', { name: /Revoke/ })).not.toBeInTheDocument();
    expect(screen.getByText('1 of 10 active keys')).toBeInTheDocument();
    expect(server.callsTo('POST', '/keys/key_2/revoke')).toHaveLength(1);
  });

  it('says why a revocation failed, with the request id', async () => {
    const server = keyServer([key(1)]).on('POST /keys/:id/revoke', failure(404, 'not_found', 'No such key.'));
    const { user } = renderApp('/keys', server);
    await user.click(await screen.findByRole('button', { name: 'Revoke Key 1' }));
    await user.click(
      within(await screen.findByRole('alertdialog')).getByRole('button', { name: 'Revoke key' }),
    );
    expect(await screen.findByRole('alert')).toHaveTextContent(
      /^Could not revoke the key: No such key\. \(request req_[0-9a-f]{32}\)$/,
    );
  });

  it('explains the 10-key limit from 8 active keys on', async () => {
    const server = keyServer(Array.from({ length: 8 }, (_, i) => key(i + 1)));
    renderApp('/keys', server);
    expect(await screen.findByText('8 of 10 active keys')).toBeInTheDocument();
    expect(screen.getByText(/at most 10 active keys; 2 more can be created/)).toBeInTheDocument();
    expect(screen.getByRole('button', { name: 'Create key' })).toBeEnabled();
  });

  it('says nothing of the limit far from it', async () => {
    renderApp('/keys', keyServer([key(1)]));
    expect(await screen.findByText('1 of 10 active keys')).toBeInTheDocument();
    expect(screen.queryByText(/at most 10 active keys/)).not.toBeInTheDocument();
  });

  it('disables creation at 10 active keys and says why', async () => {
    const keys = [...Array.from({ length: 10 }, (_, i) => key(i + 1)), key(11, { status: 'revoked' })];
    renderApp('/keys', keyServer(keys));
    const create = await screen.findByRole('button', { name: 'Create key' });
    expect(create).toBeDisabled();
    expect(create).toHaveAccessibleDescription(/You have 10 active keys, the most an account can hold/);
  });

  it('shows the server’s refusal when the limit is reached meanwhile', async () => {
    const server = keyServer(Array.from({ length: 9 }, (_, i) => key(i + 1)));
    const { user } = renderApp('/keys', server);
    server.on('POST /keys', failure(409, 'key_limit_reached', 'An account can hold at most 10 active keys.'));
    await user.click(await screen.findByRole('button', { name: 'Create key' }));
    const form = await screen.findByRole('dialog', { name: 'Create an API key' });
    await user.type(within(form).getByLabelText('Name'), 'one too many');
    await user.click(within(form).getByRole('button', { name: 'Create key' }));
    expect(await within(form).findByRole('alert')).toHaveTextContent(
      /^Could not create the key: An account can hold at most 10 active keys\. \(request req_/,
    );
  });

  it('rotates a key: shows the replacement’s secret, then revokes the old key when asked', async () => {
    const server = keyServer([key(1)]);
    const { user } = renderApp('/keys', server);
    await user.click(await screen.findByRole('button', { name: 'Rotate Key 1' }));
    await user.click(
      within(await screen.findByRole('alertdialog', { name: 'Rotate the key Key 1?' })).getByRole('button', {
        name: 'Create replacement',
      }),
    );
    const shown = await screen.findByRole('dialog', { name: 'Your new API key' });
    expect(within(shown).getByLabelText('Secret')).toHaveValue('svc_live_ROTATED1');
    expect(shown).toHaveTextContent('The old key Key 1 (svc_live_…0001) still works');
    expect(server.callsTo('POST', '/keys/key_1/revoke')).toHaveLength(0);

    await user.click(within(shown).getByRole('button', { name: 'Revoke the old key now' }));
    await waitFor(() => expect(screen.queryByRole('dialog')).not.toBeInTheDocument());
    expect(server.callsTo('POST', '/keys/key_1/revoke')).toHaveLength(1);
    expect(await screen.findByText('1 of 10 active keys')).toBeInTheDocument();
  });
});
