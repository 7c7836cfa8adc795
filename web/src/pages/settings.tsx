/**
 * Settings: the account's members (invite, which shows the one-time link to pass on; remove, which
 * ends their sessions), the webhook signing secret (revealed on demand, rotated with
 * confirmation), the notification e-mail address, and the member's own password.
 *
 * Accessible names: heading "Settings"; headings "Members", "Webhook signing secret",
 * "Notifications", "Change password"; table "Members" with buttons "Remove <e-mail>"; field
 * "E-mail address to invite", button "Invite"; field "Invitation link"; buttons "Reveal secret",
 * "Rotate secret"; field "Current signing secret"; field "Notification e-mail address", button
 * "Save address"; fields "Current password", "New password", "Repeat the new password", button
 * "Change password"; confirmations "Remove <e-mail>?" (button "Remove member") and "Rotate the
 * webhook signing secret?" (button "Rotate secret").
 */
import { useMutation } from '@tanstack/react-query';
import { useEffect, useState, type FormEvent } from 'react';
import type { Member, Settings } from '../api/contract';
import { keys, useInvalidate, useMembers, useSession, useSettings } from '../api/queries';
import { useEndpoints } from '../api/endpoints';
import { CopyField } from '../components/copy-button';
import { ConfirmDialog } from '../components/dialog';
import { formatDateTime } from '../components/format';
import { PageTitle } from '../components/shell';
import { ErrorMessage, Loading } from '../components/status';
import { NewPasswordFields, passwordProblem } from './set-password';
import { TableScroll } from '../components/table-scroll';
import { TwoFactorSection } from './two-factor';
import { Link } from 'wouter';
import { SessionsSection } from './security';

function Members() {
  const api = useEndpoints();
  const invalidate = useInvalidate();
  const members = useMembers();
  const me = useSession().data?.member;
  const [email, setEmail] = useState('');
  const [removing, setRemoving] = useState<Member | null>(null);
  const invite = useMutation({
    mutationFn: api.invite,
    onSuccess: () => {
      setEmail('');
      return invalidate(keys.members);
    },
  });
  const remove = useMutation({
    mutationFn: (member: Member) => api.removeMember(member.id),
    onSuccess: async () => {
      setRemoving(null);
      await invalidate(keys.members);
    },
  });
  const submit = (event: FormEvent) => {
    event.preventDefault();
    if (email.trim() !== '') invite.mutate({ email: email.trim() });
  };
  return (
    <section className="panel" aria-labelledby="members-title">
      <h2 id="members-title">Members</h2>
      {members.isPending ? <Loading what="the members" /> : null}
      <ErrorMessage action="Could not load the members" error={members.data ? null : members.error} />
      {members.data ? (
        <TableScroll label="Members">
          <table className="table">
            <caption className="sr-only">Members</caption>
            <thead>
              <tr>
                <th scope="col">E-mail</th>
                <th scope="col">Role</th>
                <th scope="col">Joined</th>
                <th scope="col">
                  <span className="sr-only">Actions</span>
                </th>
              </tr>
            </thead>
            <tbody>
              {members.data.members.map((member) => (
                <tr key={member.id}>
                  <th scope="row" className="cell-name">
                    {member.email}
                    {member.id === me?.id ? <span className="muted small"> (you)</span> : null}
                  </th>
                  <td>{member.role === 'owner' ? 'Owner' : 'Member'}</td>
                  <td className="nowrap">
                    {member.joined_at ? (
                      formatDateTime(member.joined_at)
                    ) : (
                      <span className="badge">Invited</span>
                    )}
                  </td>
                  <td className="cell-actions">
                    {member.role !== 'owner' && member.id !== me?.id ? (
                      <button
                        type="button"
                        className="button button-small button-danger-outline"
                        aria-label={`Remove ${member.email}`}
                        onClick={() => setRemoving(member)}
                      >
                        Remove
                      </button>
                    ) : null}
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </TableScroll>
      ) : null}
      {me?.role === 'owner' ? (
        <form className="form form-inline" onSubmit={submit}>
          <div className="field grow">
            <label htmlFor="invite-email">E-mail address to invite</label>
            <input
              id="invite-email"
              className="input"
              type="email"
              required
              maxLength={254}
              value={email}
              onChange={(event) => setEmail(event.target.value)}
            />
          </div>
          <button type="submit" className="button button-primary" disabled={invite.isPending}>
            Invite
          </button>
        </form>
      ) : (
        <p className="muted">Only the account&apos;s owner invites members.</p>
      )}
      <ErrorMessage action="Could not invite" error={invite.error} />
      {invite.data?.link ? (
        <div className="notice notice-ok" role="status">
          <p>
            {invite.data.member.email} is invited.{' '}
            {invite.data.emailed
              ? 'The link was e-mailed to them; you can also pass it on yourself.'
              : 'Pass this link on to them.'}{' '}
            It works once, until {formatDateTime(invite.data.expires_at)}.
          </p>
          <CopyField id="invite-link" label="Invitation link" value={invite.data.link} />
        </div>
      ) : invite.data ? (
        <div className="notice notice-ok" role="status">
          <p>
            {invite.data.member.email} was invited already.{' '}
            {invite.data.emailed
              ? 'A new link was e-mailed to them; the earlier one works too.'
              : 'The link given then still works'}{' '}
            until {formatDateTime(invite.data.expires_at)}.
          </p>
        </div>
      ) : null}
      {removing ? (
        <ConfirmDialog
          title={`Remove ${removing.email}?`}
          confirm="Remove member"
          busy={remove.isPending}
          onCancel={() => {
            setRemoving(null);
            remove.reset();
          }}
          onConfirm={() => remove.mutate(removing)}
          error={<ErrorMessage action="Could not remove the member" error={remove.error} />}
        >
          <p>They are signed out at once and can no longer sign in. Keys and lists stay with the account.</p>
        </ConfirmDialog>
      ) : null}
    </section>
  );
}

function WebhookSecretSection({ settings }: { settings: Settings }) {
  const api = useEndpoints();
  const invalidate = useInvalidate();
  const [confirming, setConfirming] = useState(false);
  const [secret, setSecret] = useState<string | null>(null);
  const reveal = useMutation({
    mutationFn: api.revealWebhookSecret,
    onSuccess: (value) => setSecret(value.webhook_secret),
  });
  const rotate = useMutation({
    mutationFn: api.rotateWebhookSecret,
    onSuccess: async (value) => {
      setSecret(value.webhook_secret);
      setConfirming(false);
      await invalidate(keys.settings);
    },
  });
  return (
    <section className="panel" aria-labelledby="webhook-title">
      <h2 id="webhook-title">Webhook signing secret</h2>
      <p className="muted">
        Batch webhooks carry a signature made with this secret, so your receiver can check they come from
        here. It ends in{' '}
        <span className="mono">
          {settings.webhook_secret_hint.startsWith('…') ? '' : '…'}
          {settings.webhook_secret_hint}
        </span>
        .
      </p>
      {secret ? <CopyField id="webhook-secret" label="Current signing secret" value={secret} /> : null}
      <div className="form-actions">
        {secret ? (
          <button type="button" className="button" onClick={() => setSecret(null)}>
            Hide secret
          </button>
        ) : (
          <button
            type="button"
            className="button"
            onClick={() => reveal.mutate()}
            disabled={reveal.isPending}
          >
            Reveal secret
          </button>
        )}
        <button type="button" className="button button-danger-outline" onClick={() => setConfirming(true)}>
          Rotate secret
        </button>
      </div>
      <ErrorMessage action="Could not reveal the secret" error={reveal.error} />
      {confirming ? (
        <ConfirmDialog
          title="Rotate the webhook signing secret?"
          confirm="Rotate secret"
          busy={rotate.isPending}
          onCancel={() => {
            setConfirming(false);
            rotate.reset();
          }}
          onConfirm={() => rotate.mutate()}
          error={<ErrorMessage action="Could not rotate the secret" error={rotate.error} />}
        >
          <p>
            Webhooks are signed with the new secret from now on, and the old one stops matching. Update your
            receiver right after.
          </p>
        </ConfirmDialog>
      ) : null}
    </section>
  );
}

function NotificationSection({ settings }: { settings: Settings }) {
  const api = useEndpoints();
  const invalidate = useInvalidate();
  const [email, setEmail] = useState(settings.notification_email);
  useEffect(() => setEmail(settings.notification_email), [settings.notification_email]);
  const save = useMutation({
    mutationFn: api.saveSettings,
    onSuccess: () => invalidate(keys.settings, keys.session),
  });
  const submit = (event: FormEvent) => {
    event.preventDefault();
    save.mutate({ notification_email: email.trim() });
  };
  return (
    <section className="panel" aria-labelledby="notify-title">
      <h2 id="notify-title">Notifications</h2>
      <form className="form form-inline" onSubmit={submit}>
        <div className="field grow">
          <label htmlFor="notify-email">Notification e-mail address</label>
          <input
            id="notify-email"
            className="input"
            type="email"
            required
            maxLength={254}
            value={email}
            onChange={(event) => {
              setEmail(event.target.value);
              save.reset();
            }}
            aria-describedby="notify-hint"
          />
        </div>
        <button type="submit" className="button button-primary" disabled={save.isPending}>
          Save address
        </button>
      </form>
      <p id="notify-hint" className="hint">
        {settings.relay_configured
          ? 'Where the service writes when a list is done or the quota runs low.'
          : 'Where the service would write when a list is done; this server has no mail relay, so nothing is sent for now.'}
      </p>
      {save.isSuccess ? (
        <p className="notice notice-ok" role="status">
          Saved.
        </p>
      ) : null}
      <ErrorMessage action="Could not save the address" error={save.error} />
    </section>
  );
}

/**
 * The person's sign-in address (any member's own: it is the person's, in every account). The
 * password is asked; with a relay the new address confirms by the link e-mailed to it.
 */
function EmailSection() {
  const api = useEndpoints();
  const invalidate = useInvalidate();
  const current = useSession().data?.person.email ?? '';
  const [email, setEmail] = useState('');
  const [password, setPassword] = useState('');
  const change = useMutation({
    mutationFn: api.changeEmail,
    onSuccess: async (result) => {
      setPassword('');
      if (result.status === 'changed') {
        setEmail('');
        await invalidate(keys.session);
      }
    },
  });
  const submit = (event: FormEvent) => {
    event.preventDefault();
    change.mutate({ email, password });
  };
  const result = change.data;
  return (
    <section className="panel" aria-labelledby="email-title">
      <h2 id="email-title">Sign-in address</h2>
      <p>
        You sign in with <strong>{current}</strong>.
      </p>
      <form className="form form-narrow" onSubmit={submit}>
        <div className="field">
          <label htmlFor="email-new">New address</label>
          <input
            id="email-new"
            className="input"
            type="email"
            autoComplete="email"
            required
            value={email}
            onChange={(event) => setEmail(event.target.value)}
          />
        </div>
        <div className="field">
          <label htmlFor="email-password">Your current password</label>
          <input
            id="email-password"
            className="input"
            type="password"
            autoComplete="current-password"
            required
            value={password}
            onChange={(event) => setPassword(event.target.value)}
          />
        </div>
        <ErrorMessage action="Could not change the address" error={change.error} />
        {result?.status === 'changed' ? (
          <p className="notice notice-ok" role="status">
            You sign in with {result.email} from now on.
          </p>
        ) : null}
        {result?.status === 'confirm_by_link' ? (
          <p className={`notice ${result.emailed ? 'notice-info' : 'notice-error'}`} role="status">
            {result.emailed
              ? `A link was e-mailed to ${result.email}: open it to confirm the address. Until then you sign in with ${current}.`
              : `The mail relay did not take the e-mail to ${result.email}; nothing changed. Try again later.`}
          </p>
        ) : null}
        <button type="submit" className="button button-primary" disabled={change.isPending}>
          Change address
        </button>
      </form>
    </section>
  );
}

function PasswordSection() {
  const api = useEndpoints();
  const [current, setCurrent] = useState('');
  const [password, setPassword] = useState('');
  const [repeat, setRepeat] = useState('');
  const [problem, setProblem] = useState<string | null>(null);
  const change = useMutation({
    mutationFn: api.changePassword,
    onSuccess: () => {
      setCurrent('');
      setPassword('');
      setRepeat('');
    },
  });
  const submit = (event: FormEvent) => {
    event.preventDefault();
    const found = passwordProblem(password, repeat);
    setProblem(found);
    if (!found) change.mutate({ current_password: current, new_password: password });
  };
  return (
    <section className="panel" aria-labelledby="password-title">
      <h2 id="password-title">Change password</h2>
      <form className="form form-narrow" onSubmit={submit} noValidate>
        <div className="field">
          <label htmlFor="password-current">Current password</label>
          <input
            id="password-current"
            className="input"
            type="password"
            autoComplete="current-password"
            required
            value={current}
            onChange={(event) => setCurrent(event.target.value)}
          />
        </div>
        <NewPasswordFields
          idPrefix="password"
          password={password}
          repeat={repeat}
          onPassword={setPassword}
          onRepeat={setRepeat}
          repeatLabel="Repeat the new password"
        />
        {problem ? (
          <p className="notice notice-error" role="alert">
            {problem}
          </p>
        ) : null}
        <ErrorMessage action="Could not change the password" error={change.error} />
        {change.isSuccess ? (
          <p className="notice notice-ok" role="status">
            Your password was changed.
          </p>
        ) : null}
        <button type="submit" className="button button-primary" disabled={change.isPending}>
          Change password
        </button>
      </form>
    </section>
  );
}

/**
 * The account's id, for its owner: the command line names an account by it (`keys create
 * --account acct_…`, `members reset`), and it showed nowhere else (issue 25).
 */
function AccountSection() {
  const session = useSession().data;
  if (session?.member?.role !== 'owner' || !session.account) return null;
  return (
    <section className="panel" aria-labelledby="account-title">
      <h2 id="account-title">Account</h2>
      <CopyField id="account-id" label="Account id" value={session.account.id} />
      <p className="hint">
        The command line names the account by it, e.g.{' '}
        <code>mailverdict keys create --account {session.account.id}</code>.
      </p>
    </section>
  );
}

export function SettingsPage() {
  const settings = useSettings();
  return (
    <>
      <PageTitle title="Settings">Settings</PageTitle>
      <AccountSection />
      <Members />
      {settings.isPending ? <Loading what="the settings" /> : null}
      <ErrorMessage action="Could not load the settings" error={settings.data ? null : settings.error} />
      {settings.data ? (
        <>
          <WebhookSecretSection settings={settings.data} />
          <NotificationSection settings={settings.data} />
        </>
      ) : null}
      <EmailSection />
      <PasswordSection />
      <TwoFactorSection />
      <SessionsSection />
      {useSession().data?.member?.role === 'owner' ? (
        <p>
          <Link href="/settings/security-log">Security log</Link>: sign-ins, members, keys and secrets.
        </p>
      ) : null}
    </>
  );
}
