/**
 * Integrations: the mail systems whose event webhooks report the account's delivery outcomes
 * (docs/outcomes.md, "Mail systems"). Lists them with their counts, connects one (its webhook URL,
 * and Postmark's basic-auth password, shown exactly once) and deletes one with confirmation.
 *
 * Accessible names: heading "Integrations"; button "Connect a mail system"; table "Mail systems"
 * with buttons "Delete <name>"; dialog "Connect a mail system" with radios named after the
 * providers, fields "Name" and "Verification key" (SendGrid) or "Webhook signing key" (Mailgun),
 * button "Connect"; dialog "Your webhook URL" with field "Webhook URL" and button "Done";
 * confirmation "Delete <name>?" with button "Delete".
 */
import { useMutation } from '@tanstack/react-query';
import { useState, type FormEvent } from 'react';
import type { CreatedOutcomeSource, OutcomeSourceItem } from '../api/contract';
import { useEndpoints } from '../api/endpoints';
import { keys as queryKeys, useInvalidate, useOutcomeSources } from '../api/queries';
import { Choice } from '../components/choice';
import { CopyField } from '../components/copy-button';
import { ConfirmDialog, Dialog } from '../components/dialog';
import { formatDateTime, formatNumber } from '../components/format';
import { PageTitle } from '../components/shell';
import { EmptyState, ErrorMessage, Loading } from '../components/status';
import { TableScroll } from '../components/table-scroll';

type Provider = OutcomeSourceItem['provider'];

const PROVIDERS: readonly { id: Provider; name: string; hint: string; keyLabel: string | null }[] = [
  { id: 'ses', name: 'Amazon SES', hint: 'through an SNS topic; signatures checked', keyLabel: null },
  {
    id: 'sendgrid',
    name: 'SendGrid',
    hint: 'the Signed Event Webhook',
    keyLabel: 'Verification key',
  },
  {
    id: 'mailgun',
    name: 'Mailgun',
    hint: 'webhooks signed with your signing key',
    keyLabel: 'Webhook signing key',
  },
  { id: 'postmark', name: 'Postmark', hint: 'protected by basic auth we generate', keyLabel: null },
];

const providerName = (id: Provider) => PROVIDERS.find((p) => p.id === id)?.name ?? id;
const sourceName = (source: OutcomeSourceItem) => source.label ?? providerName(source.provider);

function ConnectDialog({
  onClose,
  onCreated,
}: {
  onClose: () => void;
  onCreated: (created: CreatedOutcomeSource) => void;
}) {
  const api = useEndpoints();
  const invalidate = useInvalidate();
  const [provider, setProvider] = useState<Provider>('ses');
  const [label, setLabel] = useState('');
  const [key, setKey] = useState('');
  const [problem, setProblem] = useState<string | null>(null);
  const create = useMutation({
    mutationFn: api.createOutcomeSource,
    onSuccess: (created) => {
      onCreated(created);
      return invalidate(queryKeys.outcomeSources);
    },
  });
  const chosen = PROVIDERS.find((p) => p.id === provider)!;
  const submit = (event: FormEvent) => {
    event.preventDefault();
    if (chosen.keyLabel !== null && key.trim() === '')
      return setProblem(`Paste the ${chosen.keyLabel.toLowerCase()} from ${chosen.name}.`);
    setProblem(null);
    create.mutate({
      provider,
      ...(label.trim() === '' ? {} : { label: label.trim() }),
      ...(chosen.keyLabel === null ? {} : { verification_key: key.trim() }),
    });
  };
  return (
    <Dialog title="Connect a mail system" onClose={onClose}>
      <form className="form" onSubmit={submit} noValidate>
        <fieldset className="fieldset">
          <legend>Mail system</legend>
          {PROVIDERS.map((p) => (
            <Choice
              key={p.id}
              type="radio"
              name="esp-provider"
              label={p.name}
              hint={p.hint}
              checked={provider === p.id}
              onChange={() => setProvider(p.id)}
            />
          ))}
        </fieldset>
        <div className="field">
          <label htmlFor="source-label">Name</label>
          <input
            id="source-label"
            className="input"
            maxLength={100}
            value={label}
            onChange={(event) => setLabel(event.target.value)}
            aria-describedby="source-label-hint"
          />
          <p id="source-label-hint" className="hint">
            Optional, e.g. “transactional” or “newsletters”.
          </p>
        </div>
        {chosen.keyLabel !== null ? (
          <div className="field">
            <label htmlFor="source-key">{chosen.keyLabel}</label>
            <textarea
              id="source-key"
              className="input mono"
              rows={3}
              value={key}
              onChange={(event) => setKey(event.target.value)}
              aria-describedby="source-key-hint"
            />
            <p id="source-key-hint" className="hint">
              {provider === 'sendgrid'
                ? 'SendGrid: Settings, Mail Settings, Event Webhook, “Enable Signed Event Webhook”, then copy the Verification Key.'
                : 'Mailgun: Sending, Webhooks, “HTTP webhook signing key”.'}{' '}
              It is kept encrypted.
            </p>
          </div>
        ) : null}
        {problem ? (
          <p className="notice notice-error" role="alert">
            {problem}
          </p>
        ) : null}
        <ErrorMessage action="Could not connect the mail system" error={create.error} />
        <div className="dialog-actions">
          <button type="button" className="button" onClick={onClose}>
            Cancel
          </button>
          <button type="submit" className="button button-primary" disabled={create.isPending}>
            Connect
          </button>
        </div>
      </form>
    </Dialog>
  );
}

/** The webhook URL (and Postmark's credentials), once. */
function UrlDialog({ created, onDone }: { created: CreatedOutcomeSource; onDone: () => void }) {
  const postmark = created.basic_auth;
  return (
    <Dialog
      title="Your webhook URL"
      onClose={onDone}
      actions={
        <button type="button" className="button button-primary" onClick={onDone}>
          Done
        </button>
      }
    >
      <p>
        Give this URL to <strong>{providerName(created.source.provider)}</strong> as its event webhook (see
        the set-up steps in docs/outcomes.md).
      </p>
      <CopyField id="source-url" label="Webhook URL" value={postmark ? postmark.url : created.url} />
      {postmark ? (
        <p className="hint">
          The URL carries the basic-auth credentials Postmark sends (user {postmark.username}); paste it
          whole.
        </p>
      ) : null}
      <p className="notice notice-warn">
        This is the only time the URL is shown: it holds a secret token, kept only as a hash. If it is lost,
        delete this integration and connect the mail system again.
      </p>
    </Dialog>
  );
}

export function OutcomeSourcesPage() {
  const api = useEndpoints();
  const list = useOutcomeSources();
  const invalidate = useInvalidate();
  const [connecting, setConnecting] = useState(false);
  const [created, setCreated] = useState<CreatedOutcomeSource | null>(null);
  const [pending, setPending] = useState<OutcomeSourceItem | null>(null);
  const remove = useMutation({
    mutationFn: (source: OutcomeSourceItem) => api.deleteOutcomeSource(source.id),
    onSuccess: async () => {
      await invalidate(queryKeys.outcomeSources);
      setPending(null);
    },
  });
  const data = list.data;
  const atLimit = data ? data.sources.length >= data.limit : false;
  return (
    <>
      <div className="page-head">
        <PageTitle title="Integrations">Integrations</PageTitle>
        {data ? (
          <div className="page-actions">
            <button
              type="button"
              className="button button-primary"
              onClick={() => setConnecting(true)}
              disabled={atLimit}
            >
              Connect a mail system
            </button>
          </div>
        ) : null}
      </div>
      <p className="muted">
        Your mail system&rsquo;s bounces, deliveries and complaints, sent here by its event webhook, become
        delivery outcomes: a hard bounce or a complaint suppresses the address in your verifications.
      </p>
      {list.isPending ? <Loading what="your integrations" /> : null}
      {list.isError && !data ? (
        <ErrorMessage action="Could not load the integrations" error={list.error} />
      ) : null}
      {atLimit ? (
        <p className="notice notice-info">
          An account can connect at most {data?.limit} mail systems; delete one to connect another.
        </p>
      ) : null}
      {data && data.sources.length === 0 ? (
        <EmptyState>
          <p>No mail system connected yet.</p>
        </EmptyState>
      ) : null}
      {data && data.sources.length > 0 ? (
        <TableScroll label="Mail systems">
          <table className="table">
            <caption className="sr-only">Mail systems</caption>
            <thead>
              <tr>
                <th scope="col">Name</th>
                <th scope="col">Mail system</th>
                <th scope="col">Events taken</th>
                <th scope="col">Ignored</th>
                <th scope="col">Last event</th>
                <th scope="col">Connected</th>
                <th scope="col">
                  <span className="sr-only">Actions</span>
                </th>
              </tr>
            </thead>
            <tbody>
              {data.sources.map((source) => (
                <tr key={source.id}>
                  <th scope="row" className="cell-name">
                    {sourceName(source)}
                  </th>
                  <td>
                    {providerName(source.provider)}
                    {source.topic_arn ? <div className="mono small">{source.topic_arn}</div> : null}
                  </td>
                  <td>{formatNumber(source.events_taken)}</td>
                  <td title="The mail system's events that say nothing about a mailbox (sends, blocks of the sender, unknown types)">
                    {formatNumber(source.events_ignored)}
                  </td>
                  <td>{formatDateTime(source.last_event_at, 'Never')}</td>
                  <td>{formatDateTime(source.created_at)}</td>
                  <td className="cell-actions">
                    <button
                      type="button"
                      className="button button-small button-danger-outline"
                      aria-label={`Delete ${sourceName(source)}`}
                      onClick={() => setPending(source)}
                    >
                      Delete
                    </button>
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </TableScroll>
      ) : null}
      {connecting ? (
        <ConnectDialog
          onClose={() => setConnecting(false)}
          onCreated={(made) => {
            setConnecting(false);
            setCreated(made);
          }}
        />
      ) : null}
      {created ? <UrlDialog created={created} onDone={() => setCreated(null)} /> : null}
      {pending ? (
        <ConfirmDialog
          title={`Delete ${sourceName(pending)}?`}
          confirm="Delete"
          busy={remove.isPending}
          onCancel={() => {
            setPending(null);
            remove.reset();
          }}
          onConfirm={() => remove.mutate(pending)}
          error={<ErrorMessage action="Could not delete the integration" error={remove.error} />}
        >
          <p>
            Its webhook URL stops working at once: {providerName(pending.provider)}&rsquo;s next deliveries
            are refused. The outcomes it brought stay.
          </p>
        </ConfirmDialog>
      ) : null}
    </>
  );
}
