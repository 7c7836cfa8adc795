import { act, screen, within } from '@testing-library/react';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { JOB_POLL_MS } from '../api/queries';
import { FakeServer, ok } from '../test/fake-server';
import { job, overview } from '../test/fixtures';
import { renderApp } from '../test/render';

afterEach(() => {
  vi.useRealTimers();
});

describe('the list of jobs', () => {
  it('follows a running job’s progress without a reload, and stops polling once it is done', async () => {
    vi.useFakeTimers({ shouldAdvanceTime: true });
    let processed = 0;
    const server = new FakeServer({
      'GET /overview': ok(overview()),
      'GET /jobs': () => {
        const status = processed >= 1000 ? 'completed' : 'processing';
        const reply = ok({ jobs: [job({ name: 'leads', status, processed })], next_cursor: null });
        processed = Math.min(1000, processed + 500);
        return reply;
      },
    });
    renderApp('/lists', server);
    const progress = await screen.findByRole('progressbar', { name: 'Progress of leads' });
    expect(progress).toHaveAttribute('value', '0');
    expect(screen.getByRole('button', { name: 'Stop leads' })).toBeInTheDocument();

    await act(() => vi.advanceTimersByTimeAsync(JOB_POLL_MS));
    expect(await screen.findByText(/500 \/ 1,000/)).toBeInTheDocument();
    await act(() => vi.advanceTimersByTimeAsync(JOB_POLL_MS));
    expect(await screen.findByText('Completed')).toBeInTheDocument();
    expect(screen.queryByRole('button', { name: 'Stop leads' })).not.toBeInTheDocument();

    const calls = server.callsTo('GET', '/jobs').length;
    await act(() => vi.advanceTimersByTimeAsync(JOB_POLL_MS * 5));
    expect(server.callsTo('GET', '/jobs')).toHaveLength(calls);
  });

  it('loads older jobs a page at a time', async () => {
    const server = new FakeServer({
      'GET /overview': ok(overview()),
      'GET /jobs': (call) =>
        call.query.get('cursor') === 'page2'
          ? ok({ jobs: [job({ job_id: 'job_old', name: 'older list' })], next_cursor: null })
          : ok({ jobs: [job({ name: 'newer list' })], next_cursor: 'page2' }),
    });
    const { user } = renderApp('/lists', server);
    const table = await screen.findByRole('table', { name: 'Your lists' });
    expect(within(table).getByRole('link', { name: 'newer list' })).toBeInTheDocument();
    await user.click(screen.getByRole('button', { name: 'Load more' }));
    expect(await within(table).findByRole('link', { name: 'older list' })).toHaveAttribute(
      'href',
      '/lists/job_old',
    );
    expect(screen.queryByRole('button', { name: 'Load more' })).not.toBeInTheDocument();
  });

  it('labels the jobs of a suspended account that wait as paused', async () => {
    const server = new FakeServer({
      'GET /overview': ok(overview()),
      'GET /jobs': ok({
        jobs: [
          job({
            job_id: 'job_w',
            name: 'waiting',
            status: 'queued',
            processed: 0,
            paused: 'account_suspended',
          }),
          job({ job_id: 'job_d', name: 'done' }),
        ],
        next_cursor: null,
      }),
    });
    renderApp('/lists', server);
    const table = await screen.findByRole('table', { name: 'Your lists' });
    const [, waiting, done] = within(table).getAllByRole('row');
    expect(waiting).toHaveTextContent('Paused: account suspended');
    expect(done).not.toHaveTextContent('Paused');
  });

  it('invites a first upload when there is no job', async () => {
    renderApp(
      '/lists',
      new FakeServer({ 'GET /overview': ok(overview()), 'GET /jobs': ok({ jobs: [], next_cursor: null }) }),
    );
    expect(await screen.findByText(/No lists yet\. Upload one above/)).toBeInTheDocument();
  });
});
