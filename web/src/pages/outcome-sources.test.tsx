import { screen, waitFor, within } from '@testing-library/react';
import { describe, expect, it } from 'vitest';
import type { CreateOutcomeSourceBody, OutcomeSourceItem, OutcomeSourceList } from '../api/contract';
import { FakeServer, failure, ok } from '../test/fake-server';
import { renderApp } from '../test/render';

function item(n: number, overrides: Partial<OutcomeSourceItem> = {}): OutcomeSourceItem {
  return {
    id: `osrc_${n}`,
    provider: 'ses',
    label: null,
    topic_arn: null,
    events_taken: 0,
    events_ignored: 0,
    last_event_at: null,
    created_at: '2026-02-01T10:00:00.000Z',
    ...overrides,
  };
}

/** The sources on the fake server: list, create (the URL once), delete. */
function sourceServer(initial: OutcomeSourceItem[]) {
  let sources = [...initial];
  let made = 0;
  return new FakeServer({
    'GET /outcome-sources': () => ok({ sources, limit: 20 } satisfies OutcomeSourceList),
    'POST /outcome-sources': (call) => {
      const body = call.body as CreateOutcomeSourceBody;
      if (body.provider === 'sendgrid' && body.verification_key === 'bad')
        return failure(422, 'invalid_request', 'verification_key: not a public key');
      const source = item(100 + ++made, { provider: body.provider, label: body.label ?? null });
      sources = [...sources, source];
      const url = `https://verify.example/hooks/outcomes/${source.id}/TOKEN${made}`;
      const basic_auth =
        body.provider === 'postmark'
          ? {
              username: 'mailverdict',
              password: 'PASS',
              url: url.replace('https://', 'https://mailverdict:PASS@'),
            }
          : null;
      return ok({ source, url, basic_auth }, 201);
    },
    'DELETE /outcome-sources/:id': (_, { id }) => {
      if (!sources.some((s) => s.id === id)) return failure(404, 'not_found', 'No such source.');
      sources = sources.filter((s) => s.id !== id);
      return ok(undefined, 204);
    },
  });
}

describe('Integrations page', () => {
  it('lists the mail systems with their counts, and is in the navigation', async () => {
    const server = sourceServer([
      item(1, { provider: 'sendgrid', label: 'newsletters', events_taken: 1234, events_ignored: 5 }),
      item(2, { provider: 'ses', topic_arn: 'arn:aws:sns:us-west-2:123456789012:ses-outcomes' }),
    ]);
    renderApp('/integrations', server);
    const table = await screen.findByRole('table', { name: 'Mail systems' });
    const rows = within(table).getAllByRole('row');
    expect(rows[1]).toHaveTextContent('newsletters');
    expect(rows[1]).toHaveTextContent('SendGrid');
    expect(rows[1]).toHaveTextContent('1,234');
    expect(rows[2]).toHaveTextContent('arn:aws:sns:us-west-2:123456789012:ses-outcomes');
    expect(screen.getByRole('link', { name: 'Integrations' })).toHaveAttribute('aria-current', 'page');
  });

  it('connects SendGrid with its verification key and shows the URL once', async () => {
    const server = sourceServer([]);
    const { user } = renderApp('/integrations', server);
    await user.click(await screen.findByRole('button', { name: 'Connect a mail system' }));
    const form = await screen.findByRole('dialog', { name: 'Connect a mail system' });
    await user.click(within(form).getByRole('radio', { name: /SendGrid/ }));
    await user.click(within(form).getByRole('button', { name: 'Connect' }));
    expect(within(form).getByRole('alert')).toHaveTextContent('Paste the verification key from SendGrid');
    expect(server.callsTo('POST', '/outcome-sources')).toHaveLength(0);
    await user.type(within(form).getByLabelText('Name'), 'transactional');
    await user.type(within(form).getByLabelText('Verification key'), 'MFkwEwYHKoZIzj0CAQYIKoZIzj0DAQcDQgAE');
    await user.click(within(form).getByRole('button', { name: 'Connect' }));
    const shown = await screen.findByRole('dialog', { name: 'Your webhook URL' });
    expect(within(shown).getByLabelText('Webhook URL')).toHaveValue(
      'https://verify.example/hooks/outcomes/osrc_101/TOKEN1',
    );
    expect(shown).toHaveTextContent('only time the URL is shown');
    expect(server.callsTo('POST', '/outcome-sources')[0]?.body).toEqual({
      provider: 'sendgrid',
      label: 'transactional',
      verification_key: 'MFkwEwYHKoZIzj0CAQYIKoZIzj0DAQcDQgAE',
    });
    await user.click(within(shown).getByRole('button', { name: 'Done' }));
    expect(await screen.findByRole('row', { name: /transactional/ })).toBeInTheDocument();
  });

  it("shows Postmark's URL with its basic-auth credentials", async () => {
    const server = sourceServer([]);
    const { user } = renderApp('/integrations', server);
    await user.click(await screen.findByRole('button', { name: 'Connect a mail system' }));
    const form = await screen.findByRole('dialog', { name: 'Connect a mail system' });
    await user.click(within(form).getByRole('radio', { name: /Postmark/ }));
    expect(within(form).queryByLabelText(/key/i)).toBeNull();
    await user.click(within(form).getByRole('button', { name: 'Connect' }));
    const shown = await screen.findByRole('dialog', { name: 'Your webhook URL' });
    expect(within(shown).getByLabelText('Webhook URL')).toHaveValue(
      'https://mailverdict:PASS@verify.example/hooks/outcomes/osrc_101/TOKEN1',
    );
  });

  it('says why the server refused a key, and keeps the dialog open', async () => {
    const server = sourceServer([]);
    const { user } = renderApp('/integrations', server);
    await user.click(await screen.findByRole('button', { name: 'Connect a mail system' }));
    const form = await screen.findByRole('dialog', { name: 'Connect a mail system' });
    await user.click(within(form).getByRole('radio', { name: /SendGrid/ }));
    await user.type(within(form).getByLabelText('Verification key'), 'bad');
    await user.click(within(form).getByRole('button', { name: 'Connect' }));
    expect(await within(form).findByText(/not a public key/)).toBeInTheDocument();
  });

  it('deletes a mail system after confirmation', async () => {
    const server = sourceServer([item(1, { label: 'eu sends' })]);
    const { user } = renderApp('/integrations', server);
    await user.click(await screen.findByRole('button', { name: 'Delete eu sends' }));
    const confirm = await screen.findByRole('alertdialog', { name: 'Delete eu sends?' });
    await user.click(within(confirm).getByRole('button', { name: 'Delete' }));
    await waitFor(() => expect(screen.queryByRole('table', { name: 'Mail systems' })).toBeNull());
    expect(server.callsTo('DELETE', '/outcome-sources/osrc_1')).toHaveLength(1);
    expect(screen.getByText('No mail system connected yet.')).toBeInTheDocument();
  });
});
