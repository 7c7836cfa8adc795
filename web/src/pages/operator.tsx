/**
 * The operator console (docs/operators.md): every account with its plan, usage this period, keys,
 * members, creation date and state, with suspend/resume and plan/limit changes; a form that
 * creates an account and shows its owner's one-time link once; and the service's health. Members
 * who are not operators get 404 from its API and see that the page is not theirs.
 *
 * Accessible names: heading "Operator console"; table "Accounts" with buttons "Suspend <email>",
 * "Resume <email>", "Change <email>"; dialog "Suspend <email>?" with field "Reason" and button
 * "Suspend account"; dialog "Change <email>" with fields "Plan", "Own monthly quota", "Own rate
 * limit", "Overage" and button "Save"; form "Create an account" with fields "Owner's e-mail
 * address", "Plan" and button "Create account", then field "Owner's invitation link"; heading
 * "Service health" with table "Workers" (busy or idle, chunks done since start, last heartbeat as
 * relative time) and an alert when workers were lost.
 */
import { useMutation, useQuery } from '@tanstack/react-query';
import { useState, type FormEvent } from 'react';
import { ApiError } from '../api/client';
import type {
  CreatedOperatorAccount,
  OperatorAccount,
  OperatorAccountPatch,
  ServiceHealth,
} from '../api/contract';
import { useEndpoints } from '../api/endpoints';
import { keys as queryKeys, useInvalidate, useOperatorOutcomesReport } from '../api/queries';
import { AccuracySection } from '../components/accuracy-report';
import { CopyField } from '../components/copy-button';
import { ConfirmDialog, Dialog } from '../components/dialog';
import { formatAgo, formatDateTime, formatDay, formatNumber, plural } from '../components/format';
import { PageTitle } from '../components/shell';
import { EmptyState, ErrorMessage, Loading } from '../components/status';
import { TableScroll } from '../components/table-scroll';

/** The health panel is polled: jobs, chunks and workers move on their own. */
export const HEALTH_POLL_MS = 10_000;

type Dialogs =
  { kind: 'suspend'; account: OperatorAccount } | { kind: 'change'; account: OperatorAccount } | null;

/** The plan of an account: one of the server's plans. */
function PlanField(props: {
  id: string;
  plans: readonly string[];
  value: string;
  onChange: (value: string) => void;
}) {
  return (
    <div className="field">
      <label htmlFor={props.id}>Plan</label>
      <select
        id={props.id}
        className="input"
        value={props.value}
        onChange={(e) => props.onChange(e.target.value)}
      >
        {props.plans.map((slug) => (
          <option key={slug} value={slug}>
            {slug}
          </option>
        ))}
      </select>
    </div>
  );
}

/** A whole number that overrides the plan's; empty means the plan's. */
function OwnLimitField(props: {
  id: string;
  label: string;
  value: string;
  onChange: (value: string) => void;
}) {
  return (
    <div className="field">
      <label htmlFor={props.id}>{props.label}</label>
      <input
        id={props.id}
        className="input"
        inputMode="numeric"
        value={props.value}
        onChange={(e) => props.onChange(e.target.value)}
        placeholder="the plan’s"
      />
    </div>
  );
}

function SuspendDialog({ account, onClose }: { account: OperatorAccount; onClose: () => void }) {
  const api = useEndpoints();
  const invalidate = useInvalidate();
  const [reason, setReason] = useState('');
  const suspend = useMutation({
    mutationFn: () =>
      api.changeAccount(account.id, { suspended: true, ...(reason.trim() ? { reason: reason.trim() } : {}) }),
    onSuccess: () => (onClose(), invalidate(queryKeys.operatorAccounts, queryKeys.serviceHealth)),
  });
  return (
    <ConfirmDialog
      title={`Suspend ${account.email}?`}
      confirm="Suspend account"
      busy={suspend.isPending}
      onConfirm={() => suspend.mutate()}
      onCancel={onClose}
      error={suspend.isError ? <ErrorMessage action="Could not suspend" error={suspend.error} /> : null}
    >
      <p>
        Its API keys (live and test) are refused with <code>account_suspended</code> from the next request,
        and its running lists pause. Its members can still sign in and see the reason.
      </p>
      <div className="field">
        <label htmlFor="suspend-reason">Reason</label>
        <input
          id="suspend-reason"
          className="input"
          maxLength={500}
          value={reason}
          onChange={(event) => setReason(event.target.value)}
          aria-describedby="suspend-reason-hint"
        />
        <p id="suspend-reason-hint" className="hint">
          Shown to the account’s members, e.g. “unpaid invoice of March”.
        </p>
      </div>
    </ConfirmDialog>
  );
}

/** "" → null (back to the plan's), otherwise a whole number. */
const limitOf = (text: string): number | null | 'bad' => {
  if (text.trim() === '') return null;
  return /^\d+$/.test(text.trim()) ? Number(text.trim()) : 'bad';
};

function ChangeDialog({
  account,
  plans,
  onClose,
}: {
  account: OperatorAccount;
  plans: string[];
  onClose: () => void;
}) {
  const api = useEndpoints();
  const invalidate = useInvalidate();
  const [plan, setPlan] = useState(account.plan);
  const [quota, setQuota] = useState(account.quota_limit === null ? '' : String(account.quota_limit));
  const [rate, setRate] = useState(account.rate_limit === null ? '' : String(account.rate_limit));
  const [overage, setOverage] = useState(
    account.overage_own ? (account.overage_enabled ? 'on' : 'off') : 'plan',
  );
  const [problem, setProblem] = useState<string | null>(null);
  const change = useMutation({
    mutationFn: (body: OperatorAccountPatch) => api.changeAccount(account.id, body),
    onSuccess: () => (onClose(), invalidate(queryKeys.operatorAccounts)),
  });
  const submit = (event: FormEvent) => {
    event.preventDefault();
    const quotaLimit = limitOf(quota);
    const rateLimit = limitOf(rate);
    if (quotaLimit === 'bad')
      return setProblem('The monthly quota is a whole number, or empty for the plan’s.');
    if (rateLimit === 'bad' || rateLimit === 0)
      return setProblem('The rate limit is a whole number of at least 1, or empty for the plan’s.');
    setProblem(null);
    change.mutate({
      plan,
      quota_limit: quotaLimit,
      rate_limit: rateLimit,
      overage_enabled: overage === 'plan' ? null : overage === 'on',
    });
  };
  return (
    <Dialog title={`Change ${account.email}`} onClose={onClose}>
      <form className="form" onSubmit={submit} noValidate>
        <PlanField id="change-plan" plans={plans} value={plan} onChange={setPlan} />
        <OwnLimitField id="change-quota" label="Own monthly quota" value={quota} onChange={setQuota} />
        <OwnLimitField id="change-rate" label="Own rate limit" value={rate} onChange={setRate} />
        <div className="field">
          <label htmlFor="change-overage">Overage</label>
          <select
            id="change-overage"
            className="input"
            value={overage}
            onChange={(e) => setOverage(e.target.value)}
          >
            <option value="plan">The plan’s</option>
            <option value="on">Allowed</option>
            <option value="off">Not allowed</option>
          </select>
        </div>
        {problem ? (
          <p role="alert" className="notice notice-error">
            {problem}
          </p>
        ) : null}
        {change.isError ? <ErrorMessage action="Could not change the account" error={change.error} /> : null}
        <div className="dialog-actions">
          <button type="button" className="button" onClick={onClose}>
            Cancel
          </button>
          <button type="submit" className="button button-primary" disabled={change.isPending}>
            Save
          </button>
        </div>
      </form>
    </Dialog>
  );
}

function AccountsTable({ accounts, plans }: { accounts: OperatorAccount[]; plans: string[] }) {
  const api = useEndpoints();
  const invalidate = useInvalidate();
  const [dialog, setDialog] = useState<Dialogs>(null);
  const resume = useMutation({
    mutationFn: (account: OperatorAccount) => api.changeAccount(account.id, { suspended: false }),
    onSettled: () => invalidate(queryKeys.operatorAccounts, queryKeys.serviceHealth),
  });
  return (
    <>
      {resume.isError ? <ErrorMessage action="Could not resume the account" error={resume.error} /> : null}
      <TableScroll label="Accounts">
        <table className="table">
          <caption className="sr-only">Accounts</caption>
          <thead>
            <tr>
              <th scope="col">Account</th>
              <th scope="col">Plan</th>
              <th scope="col">Usage this period</th>
              <th scope="col">Keys</th>
              <th scope="col">Members</th>
              <th scope="col">Created</th>
              <th scope="col">State</th>
              <th scope="col">
                <span className="sr-only">Actions</span>
              </th>
            </tr>
          </thead>
          <tbody>
            {accounts.map((account) => (
              <tr key={account.id}>
                <th scope="row">
                  {account.email}
                  <br />
                  <span className="muted small">{account.id}</span>
                </th>
                <td>{account.plan}</td>
                <td>
                  {formatNumber(account.usage.used)} of{' '}
                  {account.usage.limit === null ? 'no quota' : formatNumber(account.usage.limit)}
                  {account.usage.overage_count > 0 ? ` (+${formatNumber(account.usage.overage_count)})` : ''}
                </td>
                <td>{formatNumber(account.keys)}</td>
                <td>{formatNumber(account.members)}</td>
                <td>{formatDay(account.created_at)}</td>
                <td>
                  {account.suspended ? (
                    <>
                      <strong>Suspended</strong>
                      {account.suspended_reason ? `: ${account.suspended_reason}` : ''}
                      <br />
                      <span className="muted small">since {formatDateTime(account.suspended_at)}</span>
                    </>
                  ) : (
                    'Active'
                  )}
                </td>
                <td className="actions">
                  <button
                    type="button"
                    className="button"
                    onClick={() => setDialog({ kind: 'change', account })}
                    aria-label={`Change ${account.email}`}
                  >
                    Change
                  </button>
                  {account.suspended ? (
                    <button
                      type="button"
                      className="button"
                      disabled={resume.isPending}
                      onClick={() => resume.mutate(account)}
                      aria-label={`Resume ${account.email}`}
                    >
                      Resume
                    </button>
                  ) : (
                    <button
                      type="button"
                      className="button button-danger"
                      onClick={() => setDialog({ kind: 'suspend', account })}
                      aria-label={`Suspend ${account.email}`}
                    >
                      Suspend
                    </button>
                  )}
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      </TableScroll>
      {dialog?.kind === 'suspend' ? (
        <SuspendDialog account={dialog.account} onClose={() => setDialog(null)} />
      ) : null}
      {dialog?.kind === 'change' ? (
        <ChangeDialog account={dialog.account} plans={plans} onClose={() => setDialog(null)} />
      ) : null}
    </>
  );
}

function CreateAccountForm({ plans }: { plans: string[] }) {
  const api = useEndpoints();
  const invalidate = useInvalidate();
  const [email, setEmail] = useState('');
  const [plan, setPlan] = useState('free');
  const [created, setCreated] = useState<CreatedOperatorAccount | null>(null);
  const create = useMutation({
    mutationFn: api.createAccount,
    onSuccess: (answer) => {
      setCreated(answer);
      setEmail('');
      return invalidate(queryKeys.operatorAccounts);
    },
  });
  const submit = (event: FormEvent) => {
    event.preventDefault();
    setCreated(null);
    create.mutate({ email: email.trim(), plan });
  };
  return (
    <section className="panel" aria-labelledby="create-account-title">
      <h2 id="create-account-title">Create an account</h2>
      <form className="form" onSubmit={submit} aria-labelledby="create-account-title">
        <div className="field">
          <label htmlFor="create-email">Owner’s e-mail address</label>
          <input
            id="create-email"
            className="input"
            type="email"
            required
            maxLength={254}
            value={email}
            onChange={(e) => setEmail(e.target.value)}
          />
        </div>
        <PlanField id="create-plan" plans={plans} value={plan} onChange={setPlan} />
        <button type="submit" className="button button-primary" disabled={create.isPending}>
          Create account
        </button>
      </form>
      {create.isError ? <ErrorMessage action="Could not create the account" error={create.error} /> : null}
      {created ? (
        <div className="notice notice-info">
          <p>
            Account {created.account.id} is created. Hand this one-time link to {created.account.email} only:
            it works once, until {formatDateTime(created.owner_invitation.expires_at)}, and is not shown
            again.
            {created.owner_invitation.emailed ? ' It was also e-mailed.' : ''}
          </p>
          <CopyField label="Owner’s invitation link" value={created.owner_invitation.link} id="owner-link" />
        </div>
      ) : null}
    </section>
  );
}

const WORKER_KIND: Record<string, string> = { embedded: 'Embedded (serve)', worker: 'Worker process' };

function WorkersTable({ workers, checkedAt }: { workers: ServiceHealth['workers']; checkedAt: string }) {
  const busy = workers.live.filter((w) => w.chunks > 0).length;
  return (
    <>
      {workers.lost_24h > 0 ? (
        <p className="notice notice-warn" role="alert">
          {plural(workers.lost_24h, 'worker')} stopped beating without a clean stop in the last 24 hours:
          check those processes (crashed, killed or cut off from the store).
        </p>
      ) : null}
      {workers.live.length === 0 ? (
        <p className="muted">No worker is running: queued lists wait until one starts.</p>
      ) : (
        <>
          <p className="muted">
            {plural(workers.live.length, 'live worker')}: {formatNumber(busy)} busy,{' '}
            {formatNumber(workers.live.length - busy)} idle.
          </p>
          <TableScroll label="Workers">
            <table className="table">
              <caption className="sr-only">Workers</caption>
              <thead>
                <tr>
                  <th scope="col">Worker</th>
                  <th scope="col">Kind</th>
                  <th scope="col">Host (pid)</th>
                  <th scope="col">State</th>
                  <th scope="col">Chunks done</th>
                  <th scope="col">Started</th>
                  <th scope="col">Last heartbeat</th>
                </tr>
              </thead>
              <tbody>
                {workers.live.map((w) => (
                  <tr key={w.worker_id}>
                    <th scope="row">{w.worker_id}</th>
                    <td>{w.kind === null ? '—' : (WORKER_KIND[w.kind] ?? w.kind)}</td>
                    <td>{w.host === null ? '—' : `${w.host} (${w.pid ?? '?'})`}</td>
                    <td>
                      {w.chunks > 0 ? (
                        <span className="badge worker-busy">Busy: {plural(w.chunks, 'chunk')}</span>
                      ) : (
                        <span className="badge">Idle</span>
                      )}
                    </td>
                    <td className="num">{w.chunks_done === null ? '—' : formatNumber(w.chunks_done)}</td>
                    <td className="nowrap">{formatDateTime(w.started_at)}</td>
                    <td className="nowrap" title={formatDateTime(w.last_heartbeat)}>
                      {formatAgo(w.last_heartbeat, checkedAt)}
                    </td>
                  </tr>
                ))}
              </tbody>
            </table>
          </TableScroll>
        </>
      )}
    </>
  );
}

function HealthPanel({ health }: { health: ServiceHealth }) {
  const { jobs, chunks, workers, deliveries, egresses, dns_resolver: resolver } = health;
  return (
    <>
      <div className="cards">
        <section className="card" aria-labelledby="health-jobs">
          <h3 id="health-jobs" className="card-title">
            Jobs
          </h3>
          <p>
            {formatNumber(jobs.queued)} queued · {formatNumber(jobs.processing)} processing ·{' '}
            {formatNumber(jobs.completed)} completed · {formatNumber(jobs.failed)} failed
          </p>
          <p className="muted">
            {formatNumber(chunks.pending)} chunks pending
            {chunks.paused > 0 ? `, ${formatNumber(chunks.paused)} of them paused (suspended accounts)` : ''}
          </p>
        </section>
        <section className="card" aria-labelledby="health-dns">
          <h3 id="health-dns" className="card-title">
            DNS resolver
          </h3>
          <p>
            {resolver.trusted ? 'Trusted' : 'Not trusted'} ({resolver.state})
          </p>
          {resolver.reason ? <p className="muted small">{resolver.reason}</p> : null}
          {resolver.checked_at ? (
            <p className="muted small">Checked {formatDateTime(resolver.checked_at)}</p>
          ) : null}
        </section>
        <section className="card" aria-labelledby="health-deliveries">
          <h3 id="health-deliveries" className="card-title">
            Deliveries
          </h3>
          <p>
            {formatNumber(deliveries.failed_24h)} given up in 24 h · {formatNumber(deliveries.retrying)}{' '}
            retrying
          </p>
          {deliveries.last_error ? (
            <p className="muted small">
              Last error ({formatDateTime(deliveries.last_at)}): {deliveries.last_error}
            </p>
          ) : null}
        </section>
      </div>
      <h3>Workers</h3>
      <WorkersTable workers={workers} checkedAt={health.checked_at} />
      <h3>Egresses</h3>
      {egresses === null ? (
        <p className="muted">This server does not report its egresses.</p>
      ) : (
        <ul>
          {egresses.map((e) => (
            <li key={e.egress}>
              <strong>{e.egress}</strong>: {e.state}
              {e.reason ? ` (${e.reason})` : ''}
              {e.since ? `, since ${formatDateTime(e.since)}` : ''}
            </li>
          ))}
        </ul>
      )}
    </>
  );
}

export function OperatorPage() {
  const api = useEndpoints();
  const accounts = useQuery({ queryKey: queryKeys.operatorAccounts, queryFn: api.operatorAccounts });
  const health = useQuery({
    queryKey: queryKeys.serviceHealth,
    queryFn: api.serviceHealth,
    refetchInterval: HEALTH_POLL_MS,
    enabled: accounts.isSuccess,
  });
  if (accounts.error instanceof ApiError && accounts.error.status === 404)
    return (
      <>
        <PageTitle title="Not found">Page not found</PageTitle>
        <p>There is nothing at this address.</p>
      </>
    );
  return (
    <>
      <PageTitle title="Operator console">Operator console</PageTitle>
      <section className="panel" aria-labelledby="accounts-title">
        <h2 id="accounts-title">Accounts</h2>
        {accounts.isPending ? <Loading what="the accounts" /> : null}
        {accounts.isError ? (
          <ErrorMessage action="Could not load the accounts" error={accounts.error} />
        ) : null}
        {accounts.data && accounts.data.accounts.length === 0 ? (
          <EmptyState>
            <p>No accounts yet.</p>
          </EmptyState>
        ) : null}
        {accounts.data && accounts.data.accounts.length > 0 ? (
          <AccountsTable accounts={accounts.data.accounts} plans={accounts.data.plans} />
        ) : null}
      </section>
      {accounts.data ? <CreateAccountForm plans={accounts.data.plans} /> : null}
      <section className="panel" aria-labelledby="health-title">
        <h2 id="health-title">Service health</h2>
        {health.isPending && accounts.isSuccess ? <Loading what="the service's health" /> : null}
        {health.isError ? (
          <ErrorMessage action="Could not load the service's health" error={health.error} />
        ) : null}
        {health.data ? <HealthPanel health={health.data} /> : null}
      </section>
      {accounts.isSuccess ? <OperatorAccuracy /> : null}
    </>
  );
}

/** Every account's verdicts against their outcomes, in aggregate only: no account is named. */
function OperatorAccuracy() {
  const [days, setDays] = useState(90);
  const report = useOperatorOutcomesReport(days);
  return (
    <AccuracySection
      report={report}
      days={days}
      setDays={setDays}
      intro="Every account's live verifications in the period, and what the outcomes each account reported after them say of the verdicts: in aggregate, no account's addresses or figures."
    />
  );
}
