import { screen, waitFor, within } from '@testing-library/react';
import { describe, expect, it } from 'vitest';
import type { OperatorAccount, OperatorAccountPatch, ServiceHealth } from '../api/contract';
import { FakeServer, failure, ok, session } from '../test/fake-server';
import { accuracyReport, overview } from '../test/fixtures';
import { renderApp } from '../test/render';

const PLANS = ['free', 'starter', 'growth', 'scale'];

function account(n: number, overrides: Partial<OperatorAccount> = {}): OperatorAccount {
  return {
    id: `acct_${n}`,
    email: `owner${n}@example.org`,
    plan: 'starter',
    quota_limit: null,
    rate_limit: null,
    overage_enabled: true,
    overage_own: false,
    usage: {
      period_start: '2026-03-01T00:00:00.000Z',
      period_end: '2026-04-01T00:00:00.000Z',
      used: 1200,
      limit: 10000,
      overage_count: 0,
    },
    keys: 2,
    members: 3,
    created_at: '2026-01-05T10:00:00.000Z',
    suspended: false,
    suspended_at: null,
    suspended_reason: null,
    ...overrides,
  };
}

const HEALTH: ServiceHealth = {
  checked_at: '2026-03-10T12:00:00.000Z',
  jobs: { queued: 1, processing: 2, completed: 30, failed: 1 },
  chunks: { pending: 12, paused: 4 },
  workers: {
    live: [
      {
        worker_id: 'wkr_abc',
        kind: 'embedded',
        host: 'node-1',
        pid: 101,
        version: '0.1.0',
        started_at: '2026-03-10T08:00:00.000Z',
        last_heartbeat: '2026-03-10T11:59:55.000Z',
        chunks: 2,
        chunks_done: 1840,
      },
      {
        worker_id: 'wkr_idle',
        kind: 'worker',
        host: 'node-2',
        pid: 202,
        version: '0.1.0',
        started_at: '2026-03-10T09:00:00.000Z',
        last_heartbeat: '2026-03-10T11:59:48.000Z',
        chunks: 0,
        chunks_done: 7,
      },
      {
        worker_id: 'wkr_old',
        kind: null,
        host: null,
        pid: null,
        version: null,
        started_at: null,
        last_heartbeat: '2026-03-10T11:59:50.000Z',
        chunks: 1,
        chunks_done: null,
      },
    ],
    lost_24h: 0,
  },
  deliveries: { failed_24h: 3, retrying: 1, last_error: 'HTTP 500', last_at: '2026-03-10T11:00:00.000Z' },
  egresses: [
    { egress: 'default', state: 'listed', since: '2026-03-10T10:00:00.000Z', reason: 'on a blocklist' },
  ],
  dns_resolver: { trusted: true, state: 'trusted', reason: null, checked_at: '2026-03-10T11:58:00.000Z' },
};

const UNTRUSTED = {
  trusted: false,
  state: 'untrusted',
  reason: 'the resolver denies 4 of 4 names that must exist',
  checked_at: '2026-03-10T11:59:30.000Z',
};

/** The console's API on the fake server: the accounts, PATCH applied to them, create, health. */
function consoleServer(initial: OperatorAccount[], health: ServiceHealth = HEALTH) {
  const accounts = [...initial];
  return new FakeServer({
    'GET /session': ok(session({ person: { id: 'per_ops', email: 'ops@example.com', operator: true } })),
    'GET /operator/accounts': () => ok({ accounts, plans: PLANS }),
    'PATCH /operator/accounts/:id': (call, { id }) => {
      const found = accounts.find((a) => a.id === id);
      if (!found) return failure(404, 'not_found', 'no account');
      const body = call.body as OperatorAccountPatch;
      if (body.suspended === true)
        Object.assign(found, {
          suspended: true,
          suspended_at: '2026-03-10T12:00:00.000Z',
          suspended_reason: body.reason ?? null,
        });
      if (body.suspended === false)
        Object.assign(found, { suspended: false, suspended_at: null, suspended_reason: null });
      if (body.plan) found.plan = body.plan;
      if (body.quota_limit !== undefined) found.quota_limit = body.quota_limit;
      return ok(found);
    },
    'POST /operator/accounts': (call) => {
      const created = account(99, { email: (call.body as { email: string }).email, members: 1, keys: 0 });
      accounts.unshift(created);
      return ok(
        {
          account: created,
          owner_invitation: {
            link: 'https://verify.example/accept-invite#token=ONCE',
            expires_at: '2026-03-11T12:00:00.000Z',
            emailed: false,
          },
        },
        201,
      );
    },
    'GET /operator/health': ok(health),
    'GET /operator/outcomes/report': ok(accuracyReport()),
  });
}

describe('operator console page', () => {
  it("shows every account's accuracy report in aggregate, with its reliability diagram", async () => {
    const server = consoleServer([account(1)]);
    renderApp('/operator', server);
    const section = (await screen.findByRole('heading', { name: 'How accurate are we?' })).closest(
      'section',
    )!;
    expect(
      await within(section).findByText(
        'Of the 1,000 addresses called deliverable and sent to since Dec 10, 2025, 0.4% bounced (4).',
      ),
    ).toBeInTheDocument();
    expect(within(section).getByRole('img', { name: /Reliability diagram/ })).toBeInTheDocument();
    expect(server.callsTo('GET', '/operator/outcomes/report')).toHaveLength(1);
  });

  it('lists accounts with plan, usage, keys, members, creation date and state, and the service health', async () => {
    renderApp(
      '/operator',
      consoleServer([account(1), account(2, { suspended: true, suspended_reason: 'unpaid' })]),
    );
    const table = await screen.findByRole('table', { name: 'Accounts' });
    const rows = within(table).getAllByRole('row');
    expect(rows[1]).toHaveTextContent('owner1@example.org');
    expect(rows[1]).toHaveTextContent('1,200 of 10,000');
    expect(rows[1]).toHaveTextContent('Active');
    expect(rows[2]).toHaveTextContent('Suspended: unpaid');
    expect(within(rows[2]!).getByRole('button', { name: 'Resume owner2@example.org' })).toBeInTheDocument();
    expect(await screen.findByText(/4 of them paused/)).toBeInTheDocument();
    expect(screen.getByRole('table', { name: 'Workers' })).toHaveTextContent('wkr_abc');
    expect(screen.getByText(/3 given up in 24 h/)).toBeInTheDocument();
    expect(screen.getByText(/listed/)).toBeInTheDocument();
  });

  it('shows every live worker busy or idle with its kind, host and last heartbeat, and warns of lost ones', async () => {
    renderApp(
      '/operator',
      consoleServer([account(1)], { ...HEALTH, workers: { ...HEALTH.workers, lost_24h: 2 } }),
    );
    const table = await screen.findByRole('table', { name: 'Workers' });
    const [header, busy, idle, older] = within(table).getAllByRole('row');
    const doneColumn = within(header!)
      .getAllByRole('columnheader')
      .findIndex((h) => h.textContent === 'Chunks done');
    expect(doneColumn).toBeGreaterThan(0);
    const doneOf = (row: HTMLElement | undefined) => within(row!).getAllByRole('cell')[doneColumn - 1];
    expect(busy).toHaveTextContent('wkr_abc');
    expect(busy).toHaveTextContent('Embedded (serve)');
    expect(busy).toHaveTextContent('node-1 (101)');
    expect(busy).toHaveTextContent('Busy: 2 chunks');
    expect(busy).toHaveTextContent('5 seconds ago');
    expect(idle).toHaveTextContent('Worker process');
    expect(idle).toHaveTextContent('node-2 (202)');
    expect(idle).toHaveTextContent('Idle');
    expect(idle).toHaveTextContent('12 seconds ago');
    // Chunks done since start tell an idle worker that has worked from one idle since its start.
    expect(doneOf(busy)).toHaveTextContent('1,840');
    expect(doneOf(idle)).toHaveTextContent('7');
    // A lease holder without a row (an older version) has no count.
    expect(older).toHaveTextContent('wkr_old');
    expect(doneOf(older)).toHaveTextContent('—');
    expect(screen.getByText(/3 live workers: 2 busy, 1 idle/)).toBeInTheDocument();
    expect(screen.getByRole('alert')).toHaveTextContent('2 workers stopped beating without a clean stop');
  });

  it('says when no worker runs, without a warning while none was lost', async () => {
    renderApp('/operator', consoleServer([account(1)], { ...HEALTH, workers: { live: [], lost_24h: 0 } }));
    expect(await screen.findByText(/No worker is running/)).toBeInTheDocument();
    expect(screen.queryByRole('table', { name: 'Workers' })).not.toBeInTheDocument();
    expect(screen.queryByText(/without a clean stop/)).not.toBeInTheDocument();
  });

  it('suspends an account with a reason after confirmation, then resumes it', async () => {
    const server = consoleServer([account(1)]);
    const { user } = renderApp('/operator', server);
    await user.click(await screen.findByRole('button', { name: 'Suspend owner1@example.org' }));
    const dialog = await screen.findByRole('alertdialog', { name: 'Suspend owner1@example.org?' });
    await user.type(within(dialog).getByLabelText('Reason'), 'unpaid invoice');
    await user.click(within(dialog).getByRole('button', { name: 'Suspend account' }));
    await waitFor(() => expect(screen.queryByRole('alertdialog')).not.toBeInTheDocument());
    expect(server.callsTo('PATCH', '/operator/accounts/acct_1')[0]!.body).toEqual({
      suspended: true,
      reason: 'unpaid invoice',
    });
    expect(await screen.findByText(/Suspended/)).toBeInTheDocument();
    await user.click(await screen.findByRole('button', { name: 'Resume owner1@example.org' }));
    expect(await screen.findByRole('button', { name: 'Suspend owner1@example.org' })).toBeInTheDocument();
    expect(server.callsTo('PATCH', '/operator/accounts/acct_1')[1]!.body).toEqual({ suspended: false });
  });

  it('changes plan and quota; an empty rate limit goes back to the plan’s', async () => {
    const server = consoleServer([account(1)]);
    const { user } = renderApp('/operator', server);
    await user.click(await screen.findByRole('button', { name: 'Change owner1@example.org' }));
    const dialog = await screen.findByRole('dialog', { name: 'Change owner1@example.org' });
    await user.selectOptions(within(dialog).getByLabelText('Plan'), 'scale');
    await user.type(within(dialog).getByLabelText('Own monthly quota'), '5000');
    await user.click(within(dialog).getByRole('button', { name: 'Save' }));
    await waitFor(() => expect(server.callsTo('PATCH', '/operator/accounts/acct_1')).toHaveLength(1));
    expect(server.callsTo('PATCH', '/operator/accounts/acct_1')[0]!.body).toEqual({
      plan: 'scale',
      quota_limit: 5000,
      rate_limit: null,
      overage_enabled: null,
    });
  });

  it("creates an account and shows the owner's one-time link", async () => {
    const server = consoleServer([account(1)]);
    const { user } = renderApp('/operator', server);
    await user.type(await screen.findByLabelText('Owner’s e-mail address'), 'new@example.org');
    await user.selectOptions(screen.getByLabelText('Plan'), 'growth');
    await user.click(screen.getByRole('button', { name: 'Create account' }));
    expect(
      await screen.findByDisplayValue('https://verify.example/accept-invite#token=ONCE'),
    ).toBeInTheDocument();
    expect(server.callsTo('POST', '/operator/accounts')[0]!.body).toEqual({
      email: 'new@example.org',
      plan: 'growth',
    });
  });

  it('tells a member who is not an operator that there is nothing here', async () => {
    const server = new FakeServer({ 'GET /operator/accounts': failure(404, 'not_found', 'no route') });
    renderApp('/operator', server);
    expect(await screen.findByRole('heading', { name: 'Page not found' })).toBeInTheDocument();
    expect(server.callsTo('GET', '/operator/health')).toHaveLength(0);
  });

  it('shows a link to the console in the menu for operators only', async () => {
    renderApp('/operator', consoleServer([]));
    expect(await screen.findByRole('link', { name: 'Operator console' })).toBeInTheDocument();
  });
});

describe('a DNS resolver that is not trusted', () => {
  it('shows in the console’s health panel with its reason', async () => {
    renderApp('/operator', consoleServer([account(1)], { ...HEALTH, dns_resolver: UNTRUSTED }));
    const card = (await screen.findByRole('heading', { name: 'DNS resolver' })).closest('section')!;
    expect(card).toHaveTextContent('Not trusted (untrusted)');
    expect(card).toHaveTextContent('denies 4 of 4 names');
  });

  it('puts a banner above the page for every member', async () => {
    const server = new FakeServer({
      'GET /overview': ok(overview()),
      'GET /service-status': ok({ dns_resolver: UNTRUSTED }),
    });
    renderApp('/', server);
    const banner = await screen.findByText(/Live verification is degraded/);
    expect(banner.closest('[role="alert"]')).toHaveTextContent('--dns-server');
    expect(server.callsTo('GET', '/service-status')).toHaveLength(1);
  });

  it('shows no banner while the resolver is trusted', async () => {
    const server = new FakeServer({
      'GET /overview': ok(overview()),
      'GET /service-status': ok({ dns_resolver: HEALTH.dns_resolver }),
    });
    renderApp('/', server);
    await waitFor(() => expect(server.callsTo('GET', '/service-status')).toHaveLength(1));
    await screen.findByRole('heading', { level: 1 });
    expect(screen.queryByText(/Live verification is degraded/)).toBeNull();
  });
});

describe('overview of a suspended account', () => {
  it('shows the banner with the operator’s reason', async () => {
    const server = new FakeServer({
      'GET /overview': ok(
        overview({ suspension: { since: '2026-03-10T12:00:00.000Z', reason: 'unpaid invoice' } }),
      ),
    });
    renderApp('/', server);
    expect(await screen.findByRole('alert')).toHaveTextContent('This account is suspended: unpaid invoice.');
  });
});
