/**
 * Filters: the account's own allow and block lists (docs/outcomes.md, "Filters"), which decide its
 * live verifications before any network check. Lists them (oldest first, searchable), adds one
 * (the server normalises the value and says why it refuses one; the stored value is shown back),
 * deletes one after a confirmation.
 *
 * Accessible names: heading "Filters"; form "Add a filter" with radios "Block", "Allow", select
 * "Match", field "Value" and button "Add filter"; field "Search filters"; table "Filters" with
 * buttons "Delete the filter <match> <value>"; confirmation "Delete the filter for <value>?" with
 * button "Delete filter".
 */
import { useMutation } from '@tanstack/react-query';
import { useId, useState, type FormEvent } from 'react';
import type { FilterAction, FilterItem, FilterMatch } from '../api/contract';
import { useEndpoints } from '../api/endpoints';
import { keys as queryKeys, useFilters, useInvalidate } from '../api/queries';
import { Choice } from '../components/choice';
import { ConfirmDialog } from '../components/dialog';
import { formatDateTime, formatNumber } from '../components/format';
import { PageTitle } from '../components/shell';
import { EmptyState, ErrorMessage, Loading } from '../components/status';
import { TableScroll } from '../components/table-scroll';

/** Each kind of match in words, with what a value looks like; `satisfies` fails when the server gains one. */
const MATCHES = {
  email: { label: 'Address', hint: 'One address, e.g. jane@example.com (the local part in any case).' },
  domain: {
    label: 'Domain',
    hint: 'A domain and every subdomain of it, e.g. example.com (also mail.example.com).',
  },
  tld: { label: 'Top-level domain', hint: 'One label, e.g. xyz or ru: every domain that ends in it.' },
  mx: {
    label: 'Mail server (MX host)',
    hint: 'A mail server and the hosts under it, e.g. protection.outlook.com: needs the MX look-up, never an SMTP probe.',
  },
} satisfies Record<FilterMatch, { label: string; hint: string }>;

const ACTIONS = {
  block: 'Block',
  allow: 'Allow',
} satisfies Record<FilterAction, string>;

/** Rows shown at once: an account may hold 10,000 filters; the search narrows them. */
export const SHOWN_ROWS = 200;

function AddFilterForm({ onAdded }: { onAdded: (filter: FilterItem, typed: string) => void }) {
  const api = useEndpoints();
  const invalidate = useInvalidate();
  const formId = useId();
  const [action, setAction] = useState<FilterAction>('block');
  const [match, setMatch] = useState<FilterMatch>('domain');
  const [value, setValue] = useState('');
  const [problem, setProblem] = useState<string | null>(null);
  const create = useMutation({
    mutationFn: api.createFilter,
    onSuccess: async (filter, body) => {
      setValue('');
      onAdded(filter, body.value);
      await invalidate(queryKeys.filters);
    },
  });
  const submit = (event: FormEvent) => {
    event.preventDefault();
    if (value.trim() === '') return setProblem(`Give the value to ${action}, e.g. ${example(match)}.`);
    setProblem(null);
    create.mutate({ action, match, value: value.trim() });
  };
  return (
    <form className="form card filter-form" aria-labelledby={`${formId}-title`} onSubmit={submit} noValidate>
      <h2 id={`${formId}-title`} className="card-title">
        Add a filter
      </h2>
      <fieldset className="fieldset">
        <legend>Action</legend>
        <Choice
          type="radio"
          name="filter-action"
          label="Block"
          hint="undeliverable, reason blocked_by_filter"
          checked={action === 'block'}
          onChange={() => setAction('block')}
          inline
        />
        <Choice
          type="radio"
          name="filter-action"
          label="Allow"
          hint="deliverable, reason allowed_by_filter"
          checked={action === 'allow'}
          onChange={() => setAction('allow')}
          inline
        />
      </fieldset>
      <div className="field">
        <label htmlFor="filter-match">Match</label>
        <select
          id="filter-match"
          className="input"
          value={match}
          onChange={(event) => setMatch(event.target.value as FilterMatch)}
        >
          {Object.entries(MATCHES).map(([key, { label }]) => (
            <option key={key} value={key}>
              {label}
            </option>
          ))}
        </select>
      </div>
      <div className="field">
        <label htmlFor="filter-value">Value</label>
        <input
          id="filter-value"
          className="input"
          maxLength={254}
          required
          autoComplete="off"
          spellCheck={false}
          value={value}
          onChange={(event) => setValue(event.target.value)}
          aria-describedby="filter-value-hint"
        />
        <p id="filter-value-hint" className="hint">
          {MATCHES[match].hint}
        </p>
      </div>
      {problem ? (
        <p className="notice notice-error" role="alert">
          {problem}
        </p>
      ) : null}
      <ErrorMessage action="Could not add the filter" error={create.error} />
      <div>
        <button type="submit" className="button button-primary" disabled={create.isPending}>
          Add filter
        </button>
      </div>
    </form>
  );
}

function example(match: FilterMatch): string {
  return MATCHES[match].hint.match(/e\.g\. ([^\s:,()]+)/)?.[1] ?? 'example.com';
}

const filterWords = (filter: FilterItem) => `${MATCHES[filter.match].label.toLowerCase()} ${filter.value}`;

export function FiltersPage() {
  const api = useEndpoints();
  const list = useFilters();
  const invalidate = useInvalidate();
  const [search, setSearch] = useState('');
  const [added, setAdded] = useState<{ filter: FilterItem; typed: string } | null>(null);
  const [pending, setPending] = useState<FilterItem | null>(null);
  const remove = useMutation({
    mutationFn: (filter: FilterItem) => api.deleteFilter(filter.id),
    onSuccess: async (filter) => {
      setPending(null);
      setAdded((current) => (current?.filter.id === filter.id ? null : current));
      await invalidate(queryKeys.filters);
    },
  });
  const closePending = () => {
    setPending(null);
    remove.reset();
  };

  const data = list.data;
  const needle = search.trim().toLowerCase();
  const found = data ? data.filters.filter((f) => needle === '' || f.value.includes(needle)) : [];
  const shown = found.slice(0, SHOWN_ROWS);
  const mxCount = data ? data.filters.filter((f) => f.match === 'mx').length : 0;
  return (
    <>
      <div className="page-head">
        <PageTitle title="Filters">Filters</PageTitle>
        {data ? (
          <div className="page-actions">
            <span className="counter" aria-live="polite">
              {formatNumber(data.filters.length)} of {formatNumber(data.limit)} filters
            </span>
          </div>
        ) : null}
      </div>
      <p className="muted">
        Your own allow and block lists. They decide this account&rsquo;s live verifications (the API and
        lists) before any network check: a block answers undeliverable, an allow deliverable. The most
        specific filter wins: the address, then its domain, then the top-level domain, then a mail server.
        Test keys are not filtered.
      </p>

      <AddFilterForm onAdded={(filter, typed) => setAdded({ filter, typed })} />
      {added ? (
        <p className="notice notice-info" role="status">
          {ACTIONS[added.filter.action]}: {filterWords(added.filter)}
          {added.filter.value !== added.typed.trim() ? <> (stored as {added.filter.value})</> : null}.
        </p>
      ) : null}
      {data && mxCount >= data.mx_limit ? (
        <p className="notice notice-warn">
          This account holds {data.mx_limit} mail-server filters, the most it can: each is compared with the
          mail servers of every address verified. Delete one to add another.
        </p>
      ) : null}

      {list.isPending ? <Loading what="your filters" /> : null}
      {list.isError && !data ? <ErrorMessage action="Could not load the filters" error={list.error} /> : null}
      {data && data.filters.length === 0 ? (
        <EmptyState>
          <p>No filters yet. Every address is verified on the network.</p>
        </EmptyState>
      ) : null}
      {data && data.filters.length > 0 ? (
        <>
          <div className="field">
            <label htmlFor="filter-search">Search filters</label>
            <input
              id="filter-search"
              className="input"
              type="search"
              value={search}
              onChange={(event) => setSearch(event.target.value)}
              aria-describedby="filter-search-count"
            />
            <p id="filter-search-count" className="hint" aria-live="polite">
              {found.length > shown.length
                ? `Showing the first ${formatNumber(shown.length)} of ${formatNumber(found.length)}: search to narrow them.`
                : `${formatNumber(found.length)} shown.`}
            </p>
          </div>
          <TableScroll label="Filters">
            <table className="table">
              <caption className="sr-only">Filters</caption>
              <thead>
                <tr>
                  <th scope="col">Value</th>
                  <th scope="col">Match</th>
                  <th scope="col">Action</th>
                  <th scope="col">Added</th>
                  <th scope="col">
                    <span className="sr-only">Actions</span>
                  </th>
                </tr>
              </thead>
              <tbody>
                {shown.map((filter) => (
                  <tr key={filter.id}>
                    <th scope="row" className="cell-name mono">
                      {filter.value}
                    </th>
                    <td>{MATCHES[filter.match].label}</td>
                    <td>
                      <span className={`badge filter-${filter.action}`}>{ACTIONS[filter.action]}</span>
                    </td>
                    <td>{formatDateTime(filter.created_at)}</td>
                    <td className="cell-actions">
                      <button
                        type="button"
                        className="button button-small button-danger-outline"
                        aria-label={`Delete the filter ${filter.match} ${filter.value}`}
                        onClick={() => setPending(filter)}
                      >
                        Delete
                      </button>
                    </td>
                  </tr>
                ))}
              </tbody>
            </table>
          </TableScroll>
        </>
      ) : null}

      {pending ? (
        <ConfirmDialog
          title={`Delete the filter for ${pending.value}?`}
          confirm="Delete filter"
          busy={remove.isPending}
          onCancel={closePending}
          onConfirm={() => remove.mutate(pending)}
          error={<ErrorMessage action="Could not delete the filter" error={remove.error} />}
        >
          <p>
            {ACTIONS[pending.action]} {filterWords(pending)}: from the next verification on, the addresses it
            matched are decided by a less specific filter, or verified on the network.
          </p>
        </ConfirmDialog>
      ) : null}
    </>
  );
}
