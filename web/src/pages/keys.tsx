/**
 * API keys: the account's keys (revoked ones stay listed), create one (its secret shown exactly
 * once), revoke with confirmation, rotate (create the replacement, show its secret, then offer to
 * revoke the old key). The 10-key limit is announced from 8 active keys and explains the disabled
 * "Create key" at 10.
 *
 * Accessible names: heading "API keys"; button "Create key"; table "API keys" with buttons
 * "Rotate <name>", "Revoke <name>"; create dialog "Create an API key" with field "Name", radios
 * "Live", "Test", scope checkboxes named after the scopes, button "Create key"; secret dialog
 * "Your new API key" with field "Secret" and button "Copy", button "Done" (or "Revoke the old key
 * now" / "Keep the old key for now" after a rotation); confirmation "Revoke the key <name>?" with
 * button "Revoke key"; confirmation "Rotate the key <name>?" with button "Create replacement".
 */
import { useMutation } from '@tanstack/react-query';
import { useState, type FormEvent } from 'react';
import { describeError } from '../api/client';
import type { CreatedKey, KeyItem, KeyList } from '../api/contract';
import { keys as queryKeys, useInvalidate, useKeys } from '../api/queries';
import { useEndpoints } from '../api/endpoints';
import { Choice } from '../components/choice';
import { CopyField } from '../components/copy-button';
import { ConfirmDialog, Dialog } from '../components/dialog';
import { formatDateTime, formatNumber, plural } from '../components/format';
import { PageTitle } from '../components/shell';
import { EmptyState, ErrorMessage, Loading } from '../components/status';
import { TableScroll } from '../components/table-scroll';
import { originsOf, PublishableFields, WidgetSnippet, type PublishableDraft } from './widget-snippet';

/** From this many active keys on, the limit is explained before it bites. */
export const WARN_AT = 8;

const keyName = (key: KeyItem) => key.name ?? key.display;

function LimitNote({ list }: { list: KeyList }) {
  const { active, limit } = list;
  if (active >= limit) {
    return (
      <p id="key-limit" className="notice notice-warn">
        You have {active} active keys, the most an account can hold. Revoke a key you no longer use to create
        another one.
      </p>
    );
  }
  if (active >= WARN_AT) {
    return (
      <p id="key-limit" className="notice notice-info">
        An account can hold at most {limit} active keys; {limit - active} more can be created. Revoked keys do
        not count: revoke keys you no longer use.
      </p>
    );
  }
  return null;
}

function CreateKeyDialog({
  scopes,
  onClose,
  onCreated,
}: {
  scopes: string[];
  onClose: () => void;
  onCreated: (created: CreatedKey) => void;
}) {
  const api = useEndpoints();
  const invalidate = useInvalidate();
  const [name, setName] = useState('');
  const [kind, setKind] = useState<'live' | 'test'>('live');
  const [chosen, setChosen] = useState<string[]>(scopes);
  const [problem, setProblem] = useState<string | null>(null);
  const [publishable, setPublishable] = useState<PublishableDraft>({ on: false, origins: '' });
  const create = useMutation({
    mutationFn: api.createKey,
    onSuccess: (created) => {
      onCreated(created);
      return invalidate(queryKeys.apiKeys);
    },
    onError: () => invalidate(queryKeys.apiKeys),
  });
  const submit = (event: FormEvent) => {
    event.preventDefault();
    if (name.trim() === '')
      return setProblem('Give the key a name, for example the system that will use it.');
    if (publishable.on) {
      const origins = originsOf(publishable);
      if (origins.length === 0)
        return setProblem('Give at least one allowed origin, e.g. https://shop.example.');
      setProblem(null);
      return create.mutate({
        name: name.trim(),
        kind,
        scopes: ['verify'],
        publishable: { allowedOrigins: origins },
      });
    }
    if (chosen.length === 0) return setProblem('Choose at least one scope.');
    setProblem(null);
    create.mutate({ name: name.trim(), kind, scopes: chosen });
  };
  const toggle = (scope: string, on: boolean) =>
    setChosen((current) => (on ? [...current, scope] : current.filter((item) => item !== scope)));

  return (
    <Dialog title="Create an API key" onClose={onClose}>
      <form className="form" onSubmit={submit} noValidate>
        <div className="field">
          <label htmlFor="key-name">Name</label>
          <input
            id="key-name"
            className="input"
            maxLength={100}
            required
            value={name}
            onChange={(event) => setName(event.target.value)}
            aria-describedby="key-name-hint"
          />
          <p id="key-name-hint" className="hint">
            Where the key is used, e.g. “signup form” or “CRM import”.
          </p>
        </div>
        <fieldset className="fieldset">
          <legend>Kind</legend>
          <Choice
            type="radio"
            name="key-kind"
            label="Live"
            hint="real verifications, counted against the quota"
            checked={kind === 'live'}
            onChange={() => setKind('live')}
          />
          <Choice
            type="radio"
            name="key-kind"
            label="Test"
            hint="fixed results, no network, never counted"
            checked={kind === 'test'}
            onChange={() => setKind('test')}
          />
        </fieldset>
        <PublishableFields draft={publishable} onChange={setPublishable} />
        <fieldset className="fieldset" disabled={publishable.on}>
          <legend>Scopes</legend>
          {scopes.map((scope) => (
            <Choice
              key={scope}
              type="checkbox"
              label={<span className="mono">{scope}</span>}
              checked={chosen.includes(scope)}
              onChange={(on) => toggle(scope, on)}
            />
          ))}
        </fieldset>
        {problem ? (
          <p className="notice notice-error" role="alert">
            {problem}
          </p>
        ) : null}
        <ErrorMessage action="Could not create the key" error={create.error} />
        <div className="dialog-actions">
          <button type="button" className="button" onClick={onClose}>
            Cancel
          </button>
          <button type="submit" className="button button-primary" disabled={create.isPending}>
            Create key
          </button>
        </div>
      </form>
    </Dialog>
  );
}

/**
 * What one day at a publishable key's cap costs: anyone who reads the page can spend up to it
 * every day (issue 26).
 */
function CapCost({ cost }: { cost: NonNullable<KeyItem['cap_cost']> }) {
  return (
    <span className="cap-cost">
      {' '}
      Daily cap: {plural(cost.daily_cap, 'verification', 'verifications')}
      {cost.default_cap ? ' (default)' : ''}; one day at the cap costs{' '}
      {cost.day_percent_of_quota === null || cost.monthly_quota === null
        ? 'verifications of an account without a monthly quota'
        : `${cost.day_percent_of_quota} % of the monthly quota of ${formatNumber(cost.monthly_quota)}`}
      .
    </span>
  );
}

/** The secret, once. After a rotation it also offers to revoke the key it replaces. */
function SecretDialog({
  created,
  replaced,
  widget,
  onDone,
}: {
  created: CreatedKey;
  replaced: KeyItem | null;
  widget: KeyList['widget'];
  onDone: () => void;
}) {
  const api = useEndpoints();
  const invalidate = useInvalidate();
  const revokeOld = useMutation({
    mutationFn: api.revokeKey,
    onSuccess: async () => {
      await invalidate(queryKeys.apiKeys);
      onDone();
    },
  });
  return (
    <Dialog
      title="Your new API key"
      onClose={onDone}
      actions={
        replaced ? (
          <>
            <button type="button" className="button" onClick={onDone} disabled={revokeOld.isPending}>
              Keep the old key for now
            </button>
            <button
              type="button"
              className="button button-danger"
              onClick={() => revokeOld.mutate(replaced.id)}
              disabled={revokeOld.isPending}
            >
              Revoke the old key now
            </button>
          </>
        ) : (
          <button type="button" className="button button-primary" onClick={onDone}>
            Done
          </button>
        )
      }
    >
      <p>
        <strong>{keyName(created.key)}</strong> ({created.key.kind === 'live' ? 'live' : 'test'} key)
      </p>
      {created.key.publishable ? (
        <>
          {/* A publishable key is public by design: no "keep it safe", but where it goes. */}
          <p>
            A publishable key goes in your web pages, in the widget&rsquo;s script tag below: anyone can read
            it there, and that is expected. It verifies addresses only, only from{' '}
            {created.key.allowed_origins.join(', ')}, within its per-visitor and daily limits.
          </p>
          <CopyField id="new-key-secret" label="Publishable key" value={created.secret} />
          <WidgetSnippet widget={widget} secret={created.secret} />
          {created.key.cap_cost ? <CapCost cost={created.key.cap_cost} /> : null}
          {created.warning ? (
            <p className="notice notice-warn" role="alert">
              Warning: {created.warning}.
            </p>
          ) : null}
          <p className="hint">
            It is shown only now (only its hash is kept): copy the snippet before closing. If it is lost,
            create another publishable key.
          </p>
        </>
      ) : (
        <>
          <CopyField id="new-key-secret" label="Secret" value={created.secret} />
          <p className="notice notice-warn">
            This is the only time the secret is shown. Copy it now and keep it somewhere safe: it cannot be
            shown again. If it is lost, create a new key and revoke this one.
          </p>
        </>
      )}
      {replaced ? (
        <p>
          The old key <strong>{keyName(replaced)}</strong> ({replaced.display}) still works. Revoke it once
          your systems use the new key; it is refused from the next request on.
        </p>
      ) : null}
      {revokeOld.error ? (
        <p className="notice notice-error" role="alert">
          {describeError('Could not revoke the old key', revokeOld.error)}
        </p>
      ) : null}
    </Dialog>
  );
}

type Pending = { action: 'revoke' | 'rotate'; key: KeyItem } | null;

export function KeysPage() {
  const api = useEndpoints();
  const list = useKeys();
  const invalidate = useInvalidate();
  const [creating, setCreating] = useState(false);
  const [pending, setPending] = useState<Pending>(null);
  const [secret, setSecret] = useState<{ created: CreatedKey; replaced: KeyItem | null } | null>(null);

  const revoke = useMutation({
    mutationFn: (key: KeyItem) => api.revokeKey(key.id),
    onSuccess: async () => {
      await invalidate(queryKeys.apiKeys);
      setPending(null);
    },
  });
  const rotate = useMutation({
    mutationFn: (key: KeyItem) => api.rotateKey(key.id),
    onSuccess: async (created, key) => {
      setPending(null);
      setSecret({ created, replaced: key });
      await invalidate(queryKeys.apiKeys);
    },
  });
  const closePending = () => {
    setPending(null);
    revoke.reset();
    rotate.reset();
  };

  const data = list.data;
  const atLimit = data ? data.active >= data.limit : false;
  return (
    <>
      <div className="page-head">
        <PageTitle title="API keys">API keys</PageTitle>
        {data ? (
          <div className="page-actions">
            <span className="counter" aria-live="polite">
              {data.active} of {data.limit} active keys
            </span>
            <button
              type="button"
              className="button button-primary"
              onClick={() => setCreating(true)}
              disabled={atLimit}
              aria-describedby={data.active >= WARN_AT ? 'key-limit' : undefined}
            >
              Create key
            </button>
          </div>
        ) : null}
      </div>
      <p className="muted">
        Keys open the HTTP API (<span className="mono">Authorization: Bearer …</span>), never this dashboard.
        Live keys count against the quota; test keys return fixed results.
      </p>
      {list.isPending ? <Loading what="your keys" /> : null}
      {list.isError && !data ? <ErrorMessage action="Could not load the keys" error={list.error} /> : null}
      {data ? <LimitNote list={data} /> : null}
      {data && data.keys.length === 0 ? (
        <EmptyState>
          <p>No keys yet. Create one to call the API.</p>
        </EmptyState>
      ) : null}
      {data && data.keys.length > 0 ? (
        <TableScroll label="API keys">
          <table className="table">
            <caption className="sr-only">API keys</caption>
            <thead>
              <tr>
                <th scope="col">Name</th>
                <th scope="col">Kind</th>
                <th scope="col">Scopes</th>
                <th scope="col">Key</th>
                <th scope="col">Created</th>
                <th scope="col">Last used</th>
                <th scope="col">Status</th>
                <th scope="col">
                  <span className="sr-only">Actions</span>
                </th>
              </tr>
            </thead>
            <tbody>
              {data.keys.map((key) => (
                <tr key={key.id} className={key.status === 'revoked' ? 'row-muted' : undefined}>
                  <th scope="row" className="cell-name">
                    {keyName(key)}
                  </th>
                  <td>
                    <span className={`badge kind-${key.kind}`}>{key.kind === 'live' ? 'Live' : 'Test'}</span>
                  </td>
                  <td className="mono small">
                    {key.scopes.join(', ')}
                    {key.publishable ? <> (publishable: {key.allowed_origins.join(' ')})</> : null}
                    {key.cap_cost ? <CapCost cost={key.cap_cost} /> : null}
                  </td>
                  <td className="mono small nowrap">{key.display}</td>
                  <td>{formatDateTime(key.created_at)}</td>
                  <td>{formatDateTime(key.last_used_at, 'Never')}</td>
                  <td>
                    {key.status === 'active' ? (
                      <span className="badge status-active">Active</span>
                    ) : (
                      <span className="badge status-revoked" title={formatDateTime(key.revoked_at)}>
                        Revoked
                      </span>
                    )}
                  </td>
                  <td className="cell-actions">
                    {key.status === 'active' ? (
                      <>
                        <button
                          type="button"
                          className="button button-small"
                          aria-label={`Rotate ${keyName(key)}`}
                          onClick={() => setPending({ action: 'rotate', key })}
                          disabled={atLimit}
                          aria-describedby={atLimit ? 'key-limit' : undefined}
                        >
                          Rotate
                        </button>
                        <button
                          type="button"
                          className="button button-small button-danger-outline"
                          aria-label={`Revoke ${keyName(key)}`}
                          onClick={() => setPending({ action: 'revoke', key })}
                        >
                          Revoke
                        </button>
                      </>
                    ) : null}
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </TableScroll>
      ) : null}

      {creating && data ? (
        <CreateKeyDialog
          scopes={data.scopes}
          onClose={() => setCreating(false)}
          onCreated={(created) => {
            setCreating(false);
            setSecret({ created, replaced: null });
          }}
        />
      ) : null}
      {secret ? (
        <SecretDialog
          created={secret.created}
          replaced={secret.replaced}
          widget={data?.widget ?? null}
          onDone={() => setSecret(null)}
        />
      ) : null}
      {pending?.action === 'revoke' ? (
        <ConfirmDialog
          title={`Revoke the key ${keyName(pending.key)}?`}
          confirm="Revoke key"
          busy={revoke.isPending}
          onCancel={closePending}
          onConfirm={() => revoke.mutate(pending.key)}
          error={<ErrorMessage action="Could not revoke the key" error={revoke.error} />}
        >
          <p>
            Requests with <span className="mono">{pending.key.display}</span> are refused from the next one
            on. This cannot be undone.
          </p>
        </ConfirmDialog>
      ) : null}
      {pending?.action === 'rotate' ? (
        <ConfirmDialog
          title={`Rotate the key ${keyName(pending.key)}?`}
          confirm="Create replacement"
          danger={false}
          busy={rotate.isPending}
          onCancel={closePending}
          onConfirm={() => rotate.mutate(pending.key)}
          error={<ErrorMessage action="Could not rotate the key" error={rotate.error} />}
        >
          <p>
            A new key with the same name, kind and scopes is created and its secret shown. The old key keeps
            working until you revoke it, so you can move your systems over first.
          </p>
        </ConfirmDialog>
      ) : null}
    </>
  );
}
