import { screen, waitFor, within } from '@testing-library/react';
import { describe, expect, it } from 'vitest';
import { FakeServer, ok } from '../test/fake-server';
import { job, overview, result, usage } from '../test/fixtures';
import { renderApp } from '../test/render';

describe('overview page', () => {
  it('shows the quota as a meter with its numbers in words', async () => {
    renderApp('/', new FakeServer({ 'GET /overview': ok(overview({ used: 1_234, limit: 10_000 })) }));
    const meter = await screen.findByRole('meter', { name: 'Quota used' });
    expect(meter).toHaveAttribute('aria-valuenow', '1234');
    expect(meter).toHaveAttribute('aria-valuemax', '10000');
    expect(meter).toHaveAttribute('aria-valuetext', '1,234 of 10,000 verifications used (12%)');
    expect(screen.getByText('8,766')).toBeInTheDocument();
    expect(screen.getByRole('heading', { name: 'Plan' }).parentElement).toHaveTextContent('starter');
    expect(screen.getByText('Rate limit: 10 requests per second')).toBeInTheDocument();
    expect(screen.getByRole('heading', { name: 'Billing period' }).parentElement).toHaveTextContent(
      /Mar 10, 2026 – Apr 10, 2026/,
    );
  });

  it('says how much went beyond the quota when overage is on', async () => {
    renderApp(
      '/',
      new FakeServer({ 'GET /overview': ok(overview({ used: 10_300, limit: 10_000, overage: true })) }),
    );
    const meter = await screen.findByRole('meter', { name: 'Quota used' });
    expect(meter).toHaveAttribute('aria-valuenow', '10000');
    expect(meter).toHaveAttribute('aria-valuetext', '10,300 of 10,000 verifications used (103%)');
    expect(screen.getByRole('heading', { name: 'Overage' }).parentElement).toHaveTextContent(
      'On at 0.008 per verification beyond the quota. 300 verifications beyond the quota this period.',
    );
    expect(screen.getByText(/^Cost so far:/)).toHaveTextContent('Cost so far: 2.40 (300 × 0.008)');
  });

  it('offers the daily usage as a CSV download', async () => {
    renderApp('/', new FakeServer({ 'GET /overview': ok(overview()) }));
    const link = await screen.findByRole('link', { name: 'Download CSV of verifications per day' });
    expect(link).toHaveAttribute('href', '/dashboard/api/overview/daily.csv');
  });

  it('says live verifications stop when the quota is used up without overage', async () => {
    renderApp(
      '/',
      new FakeServer({ 'GET /overview': ok(overview({ used: 1_000, limit: 1_000, overage: false })) }),
    );
    expect(await screen.findByRole('heading', { name: 'Overage' })).toBeInTheDocument();
    expect(screen.getByRole('heading', { name: 'Overage' }).parentElement).toHaveTextContent(
      'Off. Live verifications stop when the quota is used up — and it is used up until the period resets.',
    );
    expect(screen.queryByText(/^Cost so far:/)).not.toBeInTheDocument();
  });

  it('gives the daily chart’s numbers as a table', async () => {
    const { user } = renderApp('/', new FakeServer({ 'GET /overview': ok(overview()) }));
    await user.click(await screen.findByText('Show the numbers as a table'));
    const table = screen.getByRole('table', { name: 'Verifications per day' });
    const third = within(table).getByRole('rowheader', { name: '3' }).closest('tr') as HTMLElement;
    expect(
      within(third)
        .getAllByRole('cell')
        .map((cell) => cell.textContent),
    ).toEqual(['Mar 12, 2026', '4', '1,000', 'Feb 12, 2026', '2', '0']);
    // The current period has 31 days, the previous one 28.
    expect(within(table).getAllByRole('row')).toHaveLength(32);
  });

  it('lists the latest jobs, linked to their pages', async () => {
    renderApp(
      '/',
      new FakeServer({ 'GET /overview': ok(overview({ latest_jobs: [job({ name: 'March leads' })] })) }),
    );
    const link = await screen.findByRole('link', { name: 'March leads' });
    expect(link).toHaveAttribute('href', '/lists/job_1');
    expect(screen.getByRole('progressbar', { name: 'Progress of March leads' })).toHaveAttribute(
      'value',
      '1000',
    );
  });

  it('invites a first upload when there is no job', async () => {
    renderApp('/', new FakeServer({ 'GET /overview': ok(overview({ latest_jobs: [] })) }));
    expect(await screen.findByText('No lists yet.')).toBeInTheDocument();
    expect(screen.getByRole('link', { name: 'Upload a list to clean it' })).toHaveAttribute('href', '/lists');
  });

  it('shows new usage after a verification without a reload', async () => {
    let used = 10;
    const server = new FakeServer({
      'GET /overview': () => ok(overview({ usage: usage({ used, limit: 100 }) })),
      'POST /verify': () => {
        used += 1;
        return ok(result());
      },
    });
    const app = renderApp('/', server);
    expect(await screen.findByRole('meter', { name: 'Quota used' })).toHaveAttribute('aria-valuenow', '10');

    await app.user.click(screen.getByRole('link', { name: 'Verify' }));
    await app.user.type(await screen.findByLabelText('E-mail address'), 'a@example.com');
    await app.user.click(screen.getByRole('button', { name: 'Verify' }));
    await waitFor(() => expect(server.callsTo('POST', '/verify')).toHaveLength(1));
    await app.user.click(screen.getByRole('link', { name: 'Overview' }));
    await waitFor(() =>
      expect(screen.getByRole('meter', { name: 'Quota used' })).toHaveAttribute('aria-valuenow', '11'),
    );
  });

  it('tells of a scheduled re-verification skipped for quota, linked to the list', async () => {
    const notice = {
      job_id: 'job_7',
      name: 'customers.csv',
      skipped_at: '2026-03-20T09:00:00.000Z',
      need: 5000,
      next_run_at: '2026-03-27T09:00:00.000Z',
    };
    renderApp('/', new FakeServer({ 'GET /overview': ok(overview({ schedule_notices: [notice] })) }));
    const text = await screen.findByText(/The scheduled re-verification of/);
    expect(text).toHaveTextContent('the remaining quota could not cover its 5,000 addresses');
    expect(within(text).getByRole('link', { name: 'customers.csv' })).toHaveAttribute('href', '/lists/job_7');
  });
});
