import { screen, waitFor, within } from '@testing-library/react';
import { describe, expect, it } from 'vitest';
import type { OutcomeIntake, OutcomeUploadReport } from '../api/contract';
import { accuracyReport as report, figures } from '../test/fixtures';
import { FakeServer, failure, ok, session } from '../test/fake-server';
import { renderApp } from '../test/render';

const typeCounts = (over: Partial<OutcomeIntake['by_day'][number]['by_type']> = {}) => ({
  delivered: 0,
  hard_bounce: 0,
  soft_bounce: 0,
  complaint: 0,
  unsubscribed: 0,
  opened: 0,
  clicked: 0,
  ...over,
});

const intake = (over: Partial<OutcomeIntake> = {}): OutcomeIntake => ({
  since: '2026-02-09',
  total: 5,
  by_day: [
    { day: '2026-03-10', total: 3, by_type: typeCounts({ hard_bounce: 2, delivered: 1 }) },
    { day: '2026-03-09', total: 2, by_type: typeCounts({ delivered: 2 }) },
  ],
  by_source: [
    { source: 'upload', total: 4, by_type: typeCounts({ hard_bounce: 2, delivered: 2 }) },
    { source: 'api', total: 1, by_type: typeCounts({ delivered: 1 }) },
  ],
  ...over,
});

function server(overrides: Record<string, unknown> = {}) {
  return new FakeServer({
    'GET /outcomes/intake': ok(intake()),
    'GET /outcomes/report': ok(report()),
    ...(overrides as Record<string, never>),
  });
}

const rowOf = (table: HTMLElement, header: string) =>
  within(table).getByRole('rowheader', { name: header }).closest('tr') as HTMLElement;
const cells = (row: HTMLElement) =>
  within(row)
    .getAllByRole('cell')
    .map((c) => c.textContent);

describe('outcomes page', () => {
  it('is in the main navigation', async () => {
    renderApp('/', server().on('GET /overview', failure(500, 'internal', 'x')));
    const nav = await screen.findByRole('navigation', { name: 'Main' });
    expect(within(nav).getByRole('link', { name: 'Outcomes' })).toHaveAttribute('href', '/outcomes');
  });

  it('uploads a CSV as text/csv and lists the rows it refused', async () => {
    const answer: OutcomeUploadReport = {
      kind: 'csv',
      taken: 2,
      duplicates: 1,
      refused: 1,
      refusals: [{ item: 3, reason: 'invalid_type', message: 'unknown type; one of delivered, …' }],
    };
    const fake = server({ 'POST /outcomes/upload': ok(answer) });
    const { user } = renderApp('/outcomes', fake);
    const csv = 'email,type\nann@acme.test,hard_bounce\nbob@acme.test,bounced\n';
    await user.upload(await screen.findByLabelText('Choose a file'), new File([csv], 'bounces.csv'));
    await user.click(screen.getByRole('button', { name: 'Upload' }));
    const status = await screen.findByRole('status');
    expect(status).toHaveTextContent('2 events taken (1 already held), 1 refused:');
    expect(status).toHaveTextContent('Row 3: unknown type; one of delivered, …');
    const [call] = fake.callsTo('POST', '/outcomes/upload');
    expect(call?.contentType).toBe('text/csv');
    expect(call?.body).toBe(csv);
    expect(call?.headers['x-csrf-token']).toBe(session().csrf_token);
    // What came in is read again.
    await waitFor(() => expect(fake.callsTo('GET', '/outcomes/intake').length).toBeGreaterThan(1));
  });

  it('sends an .mbox as application/mbox and says which messages were not bounces', async () => {
    const answer: OutcomeUploadReport = {
      kind: 'mbox',
      taken: 1,
      duplicates: 0,
      refused: 0,
      refusals: [],
      mbox: {
        messages: 3,
        rejected: [
          { item: 2, error: 'not_a_bounce', message: 'the message is neither a bounce nor a complaint' },
        ],
        ignored: [
          {
            item: 3,
            email: 'policy@acme.test',
            reason: 'sender_policy',
            message: '5.7.1 is about the sender, not the mailbox',
          },
        ],
      },
    };
    const fake = server({ 'POST /outcomes/upload': ok(answer) });
    const { user } = renderApp('/outcomes', fake);
    await user.upload(await screen.findByLabelText('Choose a file'), new File(['From x\n'], 'bounces.mbox'));
    await user.click(screen.getByRole('button', { name: 'Upload' }));
    const status = await screen.findByRole('status');
    expect(status).toHaveTextContent('1 event taken.');
    expect(status).toHaveTextContent(
      '3 messages read; 1 not a bounce or complaint, stored nowhere; 1 recipient with no event',
    );
    expect(status).toHaveTextContent('Message 2: the message is neither a bounce nor a complaint');
    expect(status).toHaveTextContent(
      'Message 3, policy@acme.test: 5.7.1 is about the sender, not the mailbox',
    );
    expect(fake.callsTo('POST', '/outcomes/upload')[0]?.contentType).toBe('application/mbox');
  });

  it('shows the refusal of a file it cannot take', async () => {
    const fake = server({
      'POST /outcomes/upload': failure(422, 'invalid_request', 'the mbox holds no bounce or complaint'),
    });
    const { user } = renderApp('/outcomes', fake);
    await user.upload(await screen.findByLabelText('Choose a file'), new File(['From x\n'], 'bounces.mbox'));
    await user.click(screen.getByRole('button', { name: 'Upload' }));
    expect(await screen.findByText(/the mbox holds no bounce or complaint/)).toBeInTheDocument();
  });

  it('shows what came in by source and by day', async () => {
    renderApp('/outcomes', server());
    const bySource = await screen.findByRole('table', { name: 'By source' });
    expect(cells(rowOf(bySource, 'Upload'))).toEqual(['4', '2', '2', '0', '0', '0', '0', '0']);
    expect(cells(rowOf(bySource, 'API'))).toEqual(['1', '1', '0', '0', '0', '0', '0', '0']);
    const byDay = screen.getByRole('table', { name: 'By day' });
    expect(
      within(byDay)
        .getAllByRole('rowheader')
        .map((h) => h.textContent),
    ).toEqual(['Mar 10, 2026', 'Mar 9, 2026']);
    expect(screen.getByText('5 events since Feb 9, 2026.')).toBeInTheDocument();
  });

  it('says the bounce rate of the deliverable verdicts and gives every figure with its counts', async () => {
    renderApp('/outcomes', server());
    expect(
      await screen.findByText(
        'Of the 1,000 addresses called deliverable and sent to since Dec 10, 2025, 0.4% bounced (4).',
      ),
    ).toBeInTheDocument();
    const byVerdict = screen.getByRole('table', { name: 'By verdict' });
    expect(cells(rowOf(byVerdict, 'risky'))).toEqual(['catch_all', '100', '10', '8', '2', '20%']);
    const byProvider = screen.getByRole('table', { name: 'By provider' });
    expect(cells(rowOf(byProvider, 'other or none'))).toEqual(['300', '110', '106', '4', '3.6%']);
    const bands = screen.getByRole('table', { name: 'By score band' });
    expect(cells(rowOf(bands, '10–39'))).toEqual(['0', '0', '0', '0', '—']);
  });

  it('draws the reliability diagram as an image described in words, with its numbers as a table', async () => {
    renderApp('/outcomes', server());
    const diagram = await screen.findByRole('img', { name: /Reliability diagram/ });
    expect(diagram).toHaveAccessibleName(
      'Reliability diagram Scores 50 to 59: predicted 55%, observed 80% of 10. Scores 90 to 100: predicted 95%, observed 99.6% of 1,000.',
    );
    expect(diagram.querySelectorAll('circle')).toHaveLength(2);
    const table = screen.getByRole('table', { name: 'Predicted and observed delivery per score decile' });
    expect(cells(rowOf(table, '90–100'))).toEqual(['1,000', '996', '4', '95%', '99.6%']);
    expect(cells(rowOf(table, '0–9'))).toEqual(['0', '0', '0', '—', '—']);
  });

  it('asks for the period chosen', async () => {
    const fake = server();
    const { user } = renderApp('/outcomes', fake);
    await screen.findByRole('table', { name: 'By verdict' });
    await user.selectOptions(screen.getByLabelText('Period'), 'Verified in the last 30 days');
    await waitFor(() => expect(fake.callsTo('GET', '/outcomes/report')).toHaveLength(2));
    const [first, second] = fake
      .callsTo('GET', '/outcomes/report')
      .map((c) => Date.parse(c.query.get('from')!));
    expect(Math.round((second! - first!) / 86_400_000)).toBe(60);
  });

  it('says so when nothing was verified in the period', async () => {
    const empty = report({
      totals: figures(0, 0, 0, 0),
      by_status: [],
      by_reason: [],
      by_provider: [],
    });
    renderApp(
      '/outcomes',
      server({
        'GET /outcomes/report': ok(empty),
        'GET /outcomes/intake': ok(intake({ total: 0, by_day: [], by_source: [] })),
      }),
    );
    expect(
      await screen.findByText('No address was verified with a live key in this period.'),
    ).toBeInTheDocument();
    expect(screen.getByText('No outcome came in since Feb 9, 2026.')).toBeInTheDocument();
  });
});
