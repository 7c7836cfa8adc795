import { fireEvent, screen, waitFor, within } from '@testing-library/react';
import { describe, expect, it } from 'vitest';
import { FakeServer, failure, ok } from '../test/fake-server';
import { job, overview } from '../test/fixtures';
import { renderApp } from '../test/render';

const CSV = [
  'first_name,Email,company',
  'Ada,ada@example.com,Analytical',
  'Grace,grace@example.com,Navy',
  'Alan,ADA@example.com,Bletchley',
  'Edsger,not-an-address,TU Eindhoven',
  'Barbara,,MIT',
  '',
  'Donald,donald@example.org,Stanford',
].join('\r\n');

function server(options: { used?: number; limit?: number; overage?: boolean } = {}) {
  return new FakeServer({
    'GET /overview': ok(overview({ latest_jobs: [], ...options })),
    'GET /jobs': ok({ jobs: [], next_cursor: null }),
    'POST /lists': ok(
      job({ job_id: 'job_new', name: 'leads', status: 'queued', processed: 0, total: 5 }),
      202,
    ),
    'GET /jobs/:id': ok({
      job: job({ job_id: 'job_new', status: 'queued', processed: 0, total: 5 }),
      counts: null,
      schedule: null,
    }),
  });
}

async function choose(
  user: ReturnType<typeof renderApp>['user'],
  text: string,
  name = 'leads.csv',
  type = 'text/csv',
) {
  await user.upload(await screen.findByLabelText('Choose a file'), new File([text], name, { type }));
  return screen.findByRole('form', { name: 'Check the list' });
}

const stat = (term: string) => {
  const dt = screen.getAllByRole('term').find((element) => element.textContent === term);
  return dt?.nextElementSibling?.textContent;
};

describe('uploading a list', () => {
  it('finds the e-mail column by its header and previews the list with its counts', async () => {
    const { user } = renderApp('/lists', server({ used: 9_990, limit: 10_000 }));
    const form = await choose(user, CSV);
    expect(within(form).getByLabelText('Column with the e-mail addresses')).toHaveDisplayValue(
      'Column 2: Email (detected)',
    );
    expect(within(form).getByRole('checkbox', { name: 'The first row holds column names' })).toBeChecked();
    expect(stat('Rows')).toBe('6');
    expect(stat('Addresses')).toBe('5');
    expect(stat('Duplicates')).toBe('1');
    expect(stat('Look invalid')).toBe('1');
    expect(stat('Without an address')).toBe('1');
    // Six rows, one without an address: it comes back too (invalid), so it counts.
    expect(stat('Quota')).toMatch(/Uses 6 verifications of the 10 remaining this period\./);
    const preview = within(form).getByRole('table', { name: /Preview/ });
    expect(within(preview).getAllByRole('row')).toHaveLength(7);
    expect(within(preview).getByRole('columnheader', { name: /Email \(addresses\)/ })).toBeInTheDocument();
    expect(within(preview).getByRole('cell', { name: 'grace@example.com' })).toBeInTheDocument();
  });

  it('says a duplicate is verified once for every copy, and mentions the quota only for a live list', async () => {
    const { user } = renderApp('/lists', server({ used: 0, limit: 10_000 }));
    const form = await choose(user, CSV);
    expect(form).toHaveTextContent(
      'An address that appears more than once is verified once, and every copy gets its answer; each copy still counts against the quota.',
    );
    await user.click(within(form).getByRole('radio', { name: 'Test' }));
    expect(form).toHaveTextContent(
      'An address that appears more than once gets the same answer on every copy.',
    );
    expect(form).not.toHaveTextContent(/counts? against the quota/);
    expect(stat('Quota')).toBe('Test mode: nothing is counted against the quota.');
  });

  it('sends the file as CSV with the chosen column, header and mode, then opens the job', async () => {
    const fake = server();
    const app = renderApp('/lists', fake);
    const form = await choose(app.user, CSV);
    await app.user.click(within(form).getByRole('radio', { name: 'Test' }));
    await app.user.click(within(form).getByRole('button', { name: 'Start test job' }));
    await waitFor(() => expect(app.at()).toBe('/lists/job_new'));
    const [sent] = fake.callsTo('POST', '/lists');
    expect(sent?.contentType).toBe('text/csv');
    expect(sent?.body).toBe(CSV);
    expect(Object.fromEntries(sent?.query ?? [])).toEqual({
      name: 'leads',
      email_column: '1',
      header: 'true',
      mode: 'test',
    });
    expect(sent?.headers['x-csrf-token']).toBe('csrf-token-1');
  });

  it('finds the column by its values when there is no header, and lets the user change it', async () => {
    const text = ['1,x@example.com,a', '2,y@example.com,b', '3,z@example.com,a'].join('\n');
    const { user } = renderApp('/lists', server());
    const form = await choose(user, text);
    const column = within(form).getByLabelText('Column with the e-mail addresses');
    expect(column).toHaveDisplayValue('Column 2 (detected)');
    expect(
      within(form).getByRole('checkbox', { name: 'The first row holds column names' }),
    ).not.toBeChecked();
    expect(stat('Addresses')).toBe('3');
    expect(stat('Look invalid')).toBe('0');

    await user.selectOptions(column, 'Column 3');
    await waitFor(() => expect(stat('Look invalid')).toBe('3'));
    expect(stat('Duplicates')).toBe('1');
  });

  it('refuses a live list larger than the remaining quota when the plan has no overage', async () => {
    const { user } = renderApp('/lists', server({ used: 998, limit: 1_000, overage: false }));
    const form = await choose(user, CSV);
    expect(within(form).getByRole('alert')).toHaveTextContent(
      'This list needs 6 verifications but 2 remain this period, and your plan has no overage.',
    );
    expect(within(form).getByRole('button', { name: 'Start verification' })).toBeDisabled();
    await user.click(within(form).getByRole('radio', { name: 'Test' }));
    expect(within(form).getByRole('button', { name: 'Start test job' })).toBeEnabled();
  });

  it('says what overage a live list will cost beyond the quota', async () => {
    const { user } = renderApp('/lists', server({ used: 9_998, limit: 10_000, overage: true }));
    await choose(user, CSV);
    expect(stat('Quota')).toMatch(/4 verifications will be billed as overage \(0\.008 each\)/);
  });

  it('turns pasted addresses into a one-column CSV', async () => {
    const fake = server();
    const app = renderApp('/lists', fake);
    await app.user.type(
      await screen.findByLabelText('Or paste addresses'),
      'a@example.com, b@example.com;c@example.com',
    );
    await app.user.click(screen.getByRole('button', { name: 'Use these addresses' }));
    const form = await screen.findByRole('form', { name: 'Check the list' });
    expect(stat('Addresses')).toBe('3');
    await app.user.click(within(form).getByRole('button', { name: 'Start verification' }));
    await waitFor(() => expect(fake.callsTo('POST', '/lists')).toHaveLength(1));
    const [sent] = fake.callsTo('POST', '/lists');
    expect(sent?.body).toBe('a@example.com\r\nb@example.com\r\nc@example.com');
    expect(sent?.query.get('email_column')).toBe('0');
    expect(sent?.query.get('header')).toBe('false');
  });

  it('rewrites a list separated by semicolons as CSV, other columns kept', async () => {
    const fake = server();
    const app = renderApp('/lists', fake);
    const form = await choose(app.user, 'name;email\r\nAda;ada@example.com\r\n"Lovelace; A.";al@example.com');
    await app.user.click(within(form).getByRole('button', { name: 'Start verification' }));
    await waitFor(() => expect(fake.callsTo('POST', '/lists')).toHaveLength(1));
    expect(fake.callsTo('POST', '/lists')[0]?.body).toBe(
      'name,email\r\nAda,ada@example.com\r\nLovelace; A.,al@example.com\r\n',
    );
  });

  it('reads a dropped file, and says why one cannot be used', async () => {
    renderApp('/lists', server());
    const zone = await screen.findByRole('group', { name: 'Drop a CSV, TXT or XLSX file here' });
    fireEvent.drop(zone, { dataTransfer: { files: [new File(['x'], 'old.xls')] } });
    expect(await screen.findByRole('alert')).toHaveTextContent('Old Excel files (.xls) cannot be read');

    fireEvent.drop(zone, { dataTransfer: { files: [new File([CSV], 'dropped.csv', { type: 'text/csv' })] } });
    expect(await screen.findByRole('form', { name: 'Check the list' })).toHaveTextContent('dropped.csv');
  });

  it('refuses a list without addresses in the chosen column', async () => {
    const { user } = renderApp('/lists', server());
    const form = await choose(user, 'name,city\nAda,London\nGrace,Arlington');
    expect(within(form).getByRole('alert')).toHaveTextContent('No e-mail addresses found in that column.');
    expect(within(form).getByRole('button', { name: 'Start verification' })).toBeDisabled();
  });

  it('shows the server’s refusal in words', async () => {
    const fake = server().on('POST /lists', failure(422, 'invalid_request', 'The list has no addresses.'));
    const { user } = renderApp('/lists', fake);
    const form = await choose(user, CSV);
    await user.click(within(form).getByRole('button', { name: 'Start verification' }));
    expect(
      await within(form).findByText(/^Could not submit the list: The list has no addresses\. \(request req_/),
    ).toBeInTheDocument();
  });
});
