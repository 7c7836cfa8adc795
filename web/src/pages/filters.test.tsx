import { screen, waitFor, within } from '@testing-library/react';
import { describe, expect, it } from 'vitest';
import type { CreateFilterBody, FilterItem, FilterList } from '../api/contract';
import { FakeServer, failure, ok } from '../test/fake-server';
import { renderApp } from '../test/render';
import { SHOWN_ROWS } from './filters';

function filter(n: number, overrides: Partial<FilterItem> = {}): FilterItem {
  return {
    id: `flt_${n}`,
    action: 'block',
    match: 'domain',
    value: `spam${n}.example`,
    created_at: '2026-02-01T10:00:00.000Z',
    ...overrides,
  };
}

/**
 * A filter store on the fake server: list, add (a domain lower-cased and its leading @ dropped, as
 * the server stores it; a (match, value) filtered already takes the new action), delete.
 */
function filterServer(initial: FilterItem[]) {
  let filters = [...initial];
  let created = 0;
  const list = (): FilterList => ({ filters, limit: 10_000, mx_limit: 100 });
  return new FakeServer({
    'GET /filters': () => ok(list()),
    'POST /filters': (call) => {
      const body = call.body as CreateFilterBody;
      const value = body.value.replace(/^@/, '').toLowerCase();
      const same = filters.find((f) => f.match === body.match && f.value === value);
      if (same) {
        same.action = body.action;
        return ok(same, 201);
      }
      const item = filter(100 + ++created, { action: body.action, match: body.match, value });
      filters = [...filters, item];
      return ok(item, 201);
    },
    'DELETE /filters/:id': (_, { id }) => {
      const found = filters.find((f) => f.id === id);
      if (!found) return failure(404, 'not_found', `no filter ${id}`);
      filters = filters.filter((f) => f !== found);
      return ok(found);
    },
  });
}

describe('Filters page', () => {
  it('is in the main navigation', async () => {
    const { user, at } = renderApp('/', filterServer([]));
    const nav = await screen.findByRole('navigation', { name: 'Main' });
    await user.click(within(nav).getByRole('link', { name: 'Filters' }));
    expect(await screen.findByRole('heading', { name: 'Filters' })).toBeInTheDocument();
    expect(at()).toBe('/filters');
  });

  it('lists the filters with their match and action, and how many of the limit', async () => {
    renderApp(
      '/filters',
      filterServer([
        filter(1),
        filter(2, { action: 'allow', match: 'email', value: 'jane@partner.example' }),
      ]),
    );
    const table = await screen.findByRole('table', { name: 'Filters' });
    const jane = within(table).getByRole('rowheader', { name: 'jane@partner.example' }).closest('tr')!;
    expect(jane).toHaveTextContent('Address');
    expect(jane).toHaveTextContent('Allow');
    const spam = within(table).getByRole('rowheader', { name: 'spam1.example' }).closest('tr')!;
    expect(spam).toHaveTextContent('Domain');
    expect(spam).toHaveTextContent('Block');
    expect(screen.getByText('2 of 10,000 filters')).toBeInTheDocument();
  });

  it('adds a filter with the action, match and value chosen, and shows the value as stored', async () => {
    const server = filterServer([]);
    const { user } = renderApp('/filters', server);
    expect(await screen.findByText(/No filters yet/)).toBeInTheDocument();
    const form = screen.getByRole('form', { name: 'Add a filter' });
    await user.click(within(form).getByRole('radio', { name: 'Allow' }));
    await user.selectOptions(within(form).getByLabelText('Match'), 'Domain');
    expect(within(form).getByLabelText('Value')).toHaveAccessibleDescription(/every subdomain of it/);
    await user.type(within(form).getByLabelText('Value'), ' @Partner.EXAMPLE ');
    await user.click(within(form).getByRole('button', { name: 'Add filter' }));

    expect(await screen.findByRole('status')).toHaveTextContent(
      'Allow: domain partner.example (stored as partner.example).',
    );
    expect(await screen.findByRole('rowheader', { name: 'partner.example' })).toBeInTheDocument();
    expect(within(form).getByLabelText('Value')).toHaveValue('');
    const sent = server.callsTo('POST', '/filters')[0];
    expect(sent?.body).toEqual({ action: 'allow', match: 'domain', value: '@Partner.EXAMPLE' });
    expect(sent?.headers['x-csrf-token']).toBe('csrf-token-1');
  });

  it('asks for a value before sending anything', async () => {
    const server = filterServer([]);
    const { user } = renderApp('/filters', server);
    const form = await screen.findByRole('form', { name: 'Add a filter' });
    await user.selectOptions(within(form).getByLabelText('Match'), 'Top-level domain');
    await user.click(within(form).getByRole('button', { name: 'Add filter' }));
    expect(await within(form).findByRole('alert')).toHaveTextContent('Give the value to block, e.g. xyz.');
    expect(server.callsTo('POST', '/filters')).toHaveLength(0);
  });

  it("shows the server's reason for refusing a value, with the request id", async () => {
    const server = filterServer([]).on(
      'POST /filters',
      failure(422, 'invalid_request', 'value: a top-level domain is one label (com, io, xn--p1ai)'),
    );
    const { user } = renderApp('/filters', server);
    const form = await screen.findByRole('form', { name: 'Add a filter' });
    await user.selectOptions(within(form).getByLabelText('Match'), 'tld');
    await user.type(within(form).getByLabelText('Value'), 'co.uk');
    await user.click(within(form).getByRole('button', { name: 'Add filter' }));
    expect(await within(form).findByRole('alert')).toHaveTextContent(
      /^Could not add the filter: value: a top-level domain is one label \(com, io, xn--p1ai\) \(request req_[0-9a-f]{32}\)$/,
    );
    // What was typed stays, to correct it.
    expect(within(form).getByLabelText('Value')).toHaveValue('co.uk');
  });

  it('deletes a filter only after confirmation', async () => {
    const server = filterServer([filter(1), filter(2)]);
    const { user } = renderApp('/filters', server);
    await user.click(await screen.findByRole('button', { name: 'Delete the filter domain spam2.example' }));
    const confirm = await screen.findByRole('alertdialog', { name: 'Delete the filter for spam2.example?' });
    await user.click(within(confirm).getByRole('button', { name: 'Cancel' }));
    expect(server.callsTo('DELETE', '/filters/flt_2')).toHaveLength(0);

    await user.click(screen.getByRole('button', { name: 'Delete the filter domain spam2.example' }));
    await user.click(
      within(
        await screen.findByRole('alertdialog', { name: 'Delete the filter for spam2.example?' }),
      ).getByRole('button', { name: 'Delete filter' }),
    );
    await waitFor(() => expect(screen.queryByRole('alertdialog')).not.toBeInTheDocument());
    await waitFor(() =>
      expect(screen.queryByRole('rowheader', { name: 'spam2.example' })).not.toBeInTheDocument(),
    );
    expect(screen.getByRole('rowheader', { name: 'spam1.example' })).toBeInTheDocument();
    expect(server.callsTo('DELETE', '/filters/flt_2')).toHaveLength(1);
  });

  it('says why a deletion failed, inside the confirmation', async () => {
    const server = filterServer([filter(1)]).on(
      'DELETE /filters/:id',
      failure(403, 'account_suspended', 'this account is suspended: unpaid'),
    );
    const { user } = renderApp('/filters', server);
    await user.click(await screen.findByRole('button', { name: 'Delete the filter domain spam1.example' }));
    const confirm = await screen.findByRole('alertdialog');
    await user.click(within(confirm).getByRole('button', { name: 'Delete filter' }));
    expect(await within(confirm).findByRole('alert')).toHaveTextContent(
      /^Could not delete the filter: this account is suspended: unpaid \(request req_[0-9a-f]{32}\)$/,
    );
  });

  it('says when the account holds the most mail-server filters it can', async () => {
    const mx = Array.from({ length: 100 }, (_, i) => filter(i + 1, { match: 'mx', value: `mx${i}.example` }));
    renderApp('/filters', filterServer(mx));
    expect(
      await screen.findByText(/This account holds 100 mail-server filters, the most it can/),
    ).toBeInTheDocument();
  });

  it(`shows the first ${SHOWN_ROWS} filters and finds the others by search`, async () => {
    const many = Array.from({ length: SHOWN_ROWS + 50 }, (_, i) => filter(i + 1));
    const { user } = renderApp('/filters', filterServer(many));
    const table = await screen.findByRole('table', { name: 'Filters' });
    expect(within(table).getAllByRole('row')).toHaveLength(SHOWN_ROWS + 1);
    const search = screen.getByLabelText('Search filters');
    expect(search).toHaveAccessibleDescription(
      `Showing the first ${SHOWN_ROWS} of ${SHOWN_ROWS + 50}: search to narrow them.`,
    );
    await user.type(search, 'SPAM249.');
    expect(within(table).getAllByRole('row')).toHaveLength(2);
    expect(within(table).getByRole('rowheader', { name: 'spam249.example' })).toBeInTheDocument();
    expect(search).toHaveAccessibleDescription('1 shown.');
  });
});
