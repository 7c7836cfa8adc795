import { screen, waitFor, within } from '@testing-library/react';
import { describe, expect, it } from 'vitest';
import type { JobDetail, JobState, ListHistory } from '../api/contract';
import { FakeServer, failure, ok } from '../test/fake-server';
import { job } from '../test/fixtures';
import { renderApp } from '../test/render';

const done: JobDetail = {
  job: job({ name: 'March leads' }),
  counts: {
    by_status: { deliverable: 700, risky: 150, undeliverable: 100, unknown: 50 },
    by_reason: { catch_all: 150, smtp_rejected: 80, domain_not_found: 20, greylisted: 50 },
  },
  schedule: null,
};

describe('a list’s page', () => {
  it('shows the counts by verdict and by reason once done', async () => {
    renderApp('/lists/job_1', new FakeServer({ 'GET /jobs/:id': ok(done) }));
    const byVerdict = await screen.findByRole('figure', { name: 'By verdict' });
    expect(
      within(byVerdict)
        .getAllByRole('listitem')
        .map((item) => item.textContent),
    ).toEqual(['Deliverable700 (70%)', 'Risky150 (15%)', 'Undeliverable100 (10%)', 'Unknown50 (5%)']);
    const byReason = screen.getByRole('figure', { name: 'By reason' });
    expect(within(byReason).getAllByRole('listitem')[0]).toHaveTextContent(
      'The domain accepts every address, so this mailbox cannot be confirmed.150',
    );
  });

  it('downloads every row, or only the chosen verdicts', async () => {
    const { user } = renderApp('/lists/job_1', new FakeServer({ 'GET /jobs/:id': ok(done) }));
    const link = await screen.findByRole('link', { name: /Download CSV/ });
    expect(link).toHaveAttribute('href', '/dashboard/api/jobs/job_1/download');
    expect(link).toHaveAccessibleName('Download CSV (1,000 rows)');

    const group = screen.getByRole('group', { name: 'Rows to download' });
    for (const verdict of ['Risky', 'Undeliverable', 'Unknown']) {
      await user.click(within(group).getByRole('checkbox', { name: new RegExp(`^${verdict}`) }));
    }
    expect(link).toHaveAttribute('href', '/dashboard/api/jobs/job_1/download?verdicts=deliverable');
    expect(link).toHaveAccessibleName('Download CSV (700 rows)');

    await user.click(within(group).getByRole('checkbox', { name: /^Unknown/ }));
    expect(link).toHaveAttribute('href', '/dashboard/api/jobs/job_1/download?verdicts=deliverable%2Cunknown');

    await user.click(within(group).getByRole('checkbox', { name: /^Deliverable/ }));
    await user.click(within(group).getByRole('checkbox', { name: /^Unknown/ }));
    expect(screen.queryByRole('link', { name: /Download CSV/ })).not.toBeInTheDocument();
    expect(screen.getByText('Choose at least one verdict to download.')).toBeInTheDocument();
  });

  it('draws each bar as its share of the total, verdicts in their own colours', async () => {
    renderApp('/lists/job_1', new FakeServer({ 'GET /jobs/:id': ok(done) }));
    const byVerdict = await screen.findByRole('figure', { name: 'By verdict' });
    const fills = (figure: HTMLElement) =>
      Array.from(figure.querySelectorAll<HTMLElement>('.bars-fill')).map((f) => [f.className, f.style.width]);
    expect(fills(byVerdict)).toEqual([
      ['bars-fill tone-deliverable', '70%'],
      ['bars-fill tone-risky', '15%'],
      ['bars-fill tone-undeliverable', '10%'],
      ['bars-fill tone-unknown', '5%'],
    ]);
    // 150 of the list's 1,000 rows (not of the 300 rows with a reason): the same base as the verdicts.
    const byReason = screen.getByRole('figure', { name: 'By reason' });
    expect(fills(byReason).map(([, width]) => width)).toEqual(['15%', '8%', '5%', '2%']);
    expect(within(byReason).getAllByRole('listitem')[0]).toHaveTextContent('150 (15%)');
  });

  it('chooses the safe-to-send rows in one click, the corrected addresses and XLSX', async () => {
    const { user } = renderApp('/lists/job_1', new FakeServer({ 'GET /jobs/:id': ok(done) }));
    const csv = await screen.findByRole('link', { name: /Download CSV/ });
    const xlsx = screen.getByRole('link', { name: /Download XLSX/ });
    expect(xlsx).toHaveAttribute('href', '/dashboard/api/jobs/job_1/download?format=xlsx');
    const safe = screen.getByRole('group', { name: 'Safe to send' });

    await user.click(within(safe).getByRole('button', { name: 'Deliverable only' }));
    expect(within(safe).getByRole('button', { name: 'Deliverable only' })).toHaveAttribute(
      'aria-pressed',
      'true',
    );
    expect(csv).toHaveAttribute('href', '/dashboard/api/jobs/job_1/download?verdicts=deliverable');
    expect(csv).toHaveAccessibleName('Download CSV (700 rows)');

    await user.click(within(safe).getByRole('button', { name: 'Deliverable and risky' }));
    expect(csv).toHaveAttribute('href', '/dashboard/api/jobs/job_1/download?verdicts=deliverable%2Crisky');
    const rows = screen.getByRole('group', { name: 'Rows to download' });
    expect(within(rows).getByRole('checkbox', { name: /^Risky/ })).toBeChecked();
    expect(within(rows).getByRole('checkbox', { name: /^Unknown/ })).not.toBeChecked();

    const corrected = screen.getByRole('group', { name: 'Suggested addresses' });
    await user.click(within(corrected).getByRole('radio', { name: 'Beside the address' }));
    expect(csv).toHaveAttribute(
      'href',
      '/dashboard/api/jobs/job_1/download?verdicts=deliverable%2Crisky&corrected=beside',
    );
    await user.click(within(corrected).getByRole('radio', { name: 'In place of the address' }));
    expect(xlsx).toHaveAttribute(
      'href',
      '/dashboard/api/jobs/job_1/download?verdicts=deliverable%2Crisky&corrected=replace&format=xlsx',
    );
  });

  it('shows that a queued job waits on the account’s suspension', async () => {
    const paused = job({ name: 'March leads', status: 'queued', processed: 0, paused: 'account_suspended' });
    renderApp(
      '/lists/job_1',
      new FakeServer({ 'GET /jobs/:id': ok({ job: paused, counts: null, schedule: null }) }),
    );
    expect(await screen.findByText('Paused: account suspended')).toBeInTheDocument();
  });

  it('stops a running job after confirmation', async () => {
    let status: JobState = 'processing';
    const server = new FakeServer({
      'GET /jobs/:id': () =>
        ok({
          job: job({ name: 'March leads', status, processed: 400, downloadable: false, completed_at: null }),
          counts: null,
          schedule: null,
        }),
      'POST /jobs/:id/cancel': () => {
        status = 'cancelled';
        return ok(job({ status }));
      },
    });
    const { user } = renderApp('/lists/job_1', server);
    expect(await screen.findByRole('progressbar', { name: 'Progress of March leads' })).toHaveAttribute(
      'value',
      '400',
    );
    expect(screen.getByText('The results can be downloaded once the job is done.')).toBeInTheDocument();

    await user.click(screen.getByRole('button', { name: 'Stop this job' }));
    const confirm = await screen.findByRole('alertdialog', { name: 'Stop the list March leads?' });
    await user.click(within(confirm).getByRole('button', { name: 'Keep it running' }));
    expect(server.callsTo('POST', '/jobs/job_1/cancel')).toHaveLength(0);

    await user.click(screen.getByRole('button', { name: 'Stop this job' }));
    await user.click(
      within(await screen.findByRole('alertdialog')).getByRole('button', { name: 'Stop the job' }),
    );
    expect(await screen.findByText('Cancelled')).toBeInTheDocument();
    await waitFor(() =>
      expect(screen.queryByRole('button', { name: 'Stop this job' })).not.toBeInTheDocument(),
    );
    expect(server.callsTo('POST', '/jobs/job_1/cancel')[0]?.headers['x-csrf-token']).toBe('csrf-token-1');
  });

  it('says when a list is not this account’s', async () => {
    renderApp(
      '/lists/job_other',
      new FakeServer({ 'GET /jobs/:id': failure(404, 'not_found', 'No such job.') }),
    );
    expect(await screen.findByRole('heading', { name: 'List not found' })).toBeInTheDocument();
    expect(screen.getByRole('alert')).toHaveTextContent('No list of this account has that id.');
  });

  it('does not say that the runs of a test-mode list count against the quota', async () => {
    const test = { ...done, job: job({ name: 'March leads', mode: 'test' }) };
    renderApp(
      '/lists/job_1',
      new FakeServer({ 'GET /jobs/:id': ok(test), 'GET /jobs/:id/history': ok({ runs: [] }) }),
    );
    await screen.findByText(
      /Each run is a new job of this list, in test mode: nothing is counted against the quota\./,
    );
    expect(document.body).not.toHaveTextContent(/counts against the quota/);
  });

  it('puts the list on a schedule and shows each run with what changed', async () => {
    let schedule: JobDetail['schedule'] = null;
    const history: ListHistory = {
      runs: [
        {
          job_id: 'job_2',
          kind: 'run',
          created_at: '2026-03-19T09:00:00.000Z',
          status: 'completed',
          total: 1000,
          counts: { deliverable: 690, undeliverable: 110, risky: 150, unknown: 50 },
          changes: { became_undeliverable: 12, became_deliverable: 2, compared_with: 'job_1' },
        },
        {
          job_id: null,
          kind: 'skipped',
          created_at: '2026-03-15T09:00:00.000Z',
          status: null,
          total: 1000,
          counts: null,
          changes: null,
        },
        {
          job_id: 'job_1',
          kind: 'upload',
          created_at: '2026-03-12T09:00:00.000Z',
          status: 'completed',
          total: 1000,
          counts: { deliverable: 700, undeliverable: 100, risky: 150, unknown: 50 },
          changes: null,
        },
      ],
    };
    const server = new FakeServer({
      'GET /jobs/:id': () => ok({ ...done, schedule }),
      'GET /jobs/:id/history': ok(history),
      'PUT /jobs/:id/schedule': (call) => {
        const every = (call.body as { every_days: number | null }).every_days;
        schedule = every === null ? null : { every_days: every, next_run_at: '2026-03-19T09:00:00.000Z' };
        return ok({ schedule });
      },
    });
    const { user } = renderApp('/lists/job_1', server);
    const days = await screen.findByLabelText('Re-verify every (days)');
    await user.clear(days);
    await user.type(days, '7');
    await user.click(screen.getByRole('button', { name: 'Save schedule' }));
    expect(await screen.findByText(/Re-verified every 7 days\./)).toBeInTheDocument();
    expect(server.callsTo('PUT', '/jobs/job_1/schedule')[0]!.body).toEqual({ every_days: 7 });

    const table = screen.getByRole('table', { name: 'History of March leads' });
    const rows = within(table).getAllByRole('row').slice(1);
    expect(rows).toHaveLength(3);
    expect(rows[0]).toHaveTextContent('12 became undeliverable, 2 became deliverable');
    expect(within(rows[0]!).getByRole('link', { name: /^Download changed rows/ })).toHaveAttribute(
      'href',
      '/dashboard/api/jobs/job_2/changes',
    );
    expect(rows[1]).toHaveTextContent('Skipped: the quota could not cover it');
    expect(rows[2]).toHaveTextContent('First verification');

    await user.click(screen.getByRole('button', { name: 'Stop re-verifying' }));
    expect(await screen.findByText(/Not re-verified on a schedule\./)).toBeInTheDocument();
    expect(server.callsTo('PUT', '/jobs/job_1/schedule')[1]!.body).toEqual({ every_days: null });
  });
});
