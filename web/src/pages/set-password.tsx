/**
 * The two pages a one-time link opens: /accept-invite#<token> (an invitation: shows the invited
 * address) and /reset-password#<token>. The token travels in the fragment, which browsers never
 * send to a server nor put in a Referer. Setting the password signs the member in.
 *
 * An invitation to an address that has a password already (a person of another account) never
 * sets one: the page asks them to sign in (the token waits in memory, never in a URL) and then
 * offers "Join the account", which adds the membership to the signed-in person. The preview does
 * not say whether the address has a password (the inviting owner could read it; issue 26): the
 * page offers both, and switches to signing in when setting a password answers 401, or when the
 * browser is signed in as the invited address already.
 *
 * Accessible names: heading "Join mailverdict" or "Choose a new password"; fields "New password",
 * "Repeat the password"; button "Set password and sign in".
 */
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useState, type FormEvent } from 'react';
import { Link, useLocation } from 'wouter';
import { ApiError } from '../api/client';
import { isChallenge, keys, startSession, useSession } from '../api/queries';
import { useEndpoints } from '../api/endpoints';
import { formatDateTime } from '../components/format';
import { ErrorMessage, Loading } from '../components/status';
import { AuthFrame } from './auth-frame';

/** The same bounds as the contract's SetPasswordBody. */
export const MIN_PASSWORD = 10;
export const MAX_PASSWORD = 1024;

/** Why a new password cannot be used yet, or null. */
export function passwordProblem(password: string, repeat: string): string | null {
  if (password.length < MIN_PASSWORD) return `The password needs at least ${MIN_PASSWORD} characters.`;
  if (password.length > MAX_PASSWORD) return `The password can have at most ${MAX_PASSWORD} characters.`;
  if (password !== repeat) return 'The two passwords are not the same.';
  return null;
}

function tokenFromFragment(): string {
  return decodeURIComponent(window.location.hash.replace(/^#/, ''));
}

/** Where an invitation's token waits while its person signs in (memory only, never a URL). */
// Under the session's key: signing in keeps it (startSession forgets every other query).
const PENDING_INVITATION = ['session', 'pending-invitation'] as const;

/** Accepting an invitation as a person who has a password: signed in as them, then one button. */
function JoinWithSignIn({ token, email }: { token: string; email: string }) {
  const api = useEndpoints();
  const client = useQueryClient();
  const [, navigate] = useLocation();
  const session = useSession();
  const join = useMutation({
    mutationFn: () => api.joinInvitation(token),
    onSuccess: (view) => {
      client.removeQueries({ queryKey: PENDING_INVITATION });
      startSession(client, view);
      navigate('/', { replace: true });
    },
  });
  if (session.isPending) return <Loading what="your session" />;
  const signedInAs = session.data?.person.email ?? null;
  if (signedInAs === email) {
    return (
      <>
        <p>
          You are signed in as <strong>{email}</strong>. Join this account to switch between your accounts
          from the menu.
        </p>
        <ErrorMessage action="Could not join the account" error={join.error} />
        <button
          type="button"
          className="button button-primary button-wide"
          disabled={join.isPending}
          onClick={() => join.mutate()}
        >
          Join the account
        </button>
      </>
    );
  }
  return (
    <>
      <p>
        You were invited as <strong>{email}</strong>, which has a password already.{' '}
        {signedInAs !== null
          ? `You are signed in as ${signedInAs}: sign out, then sign in as ${email} to accept.`
          : 'Sign in with it, and you will come back here to join the account.'}
      </p>
      {signedInAs === null ? (
        <p className="auth-links">
          <Link
            href="/sign-in?next=%2Faccept-invite"
            onClick={() => client.setQueryData(PENDING_INVITATION, token)}
          >
            Sign in to accept
          </Link>
        </p>
      ) : null}
    </>
  );
}

/** "New password" and "Repeat the password", with the rule said up front. */
export function NewPasswordFields({
  idPrefix,
  password,
  repeat,
  onPassword,
  onRepeat,
  newLabel = 'New password',
  repeatLabel = 'Repeat the password',
}: {
  idPrefix: string;
  password: string;
  repeat: string;
  onPassword: (value: string) => void;
  onRepeat: (value: string) => void;
  newLabel?: string;
  repeatLabel?: string;
}) {
  return (
    <>
      <div className="field">
        <label htmlFor={`${idPrefix}-new`}>{newLabel}</label>
        <input
          id={`${idPrefix}-new`}
          className="input"
          type="password"
          autoComplete="new-password"
          minLength={MIN_PASSWORD}
          maxLength={MAX_PASSWORD}
          required
          aria-describedby={`${idPrefix}-rule`}
          value={password}
          onChange={(event) => onPassword(event.target.value)}
        />
        <p id={`${idPrefix}-rule`} className="hint">
          At least {MIN_PASSWORD} characters. A few unrelated words make a strong one.
        </p>
      </div>
      <div className="field">
        <label htmlFor={`${idPrefix}-repeat`}>{repeatLabel}</label>
        <input
          id={`${idPrefix}-repeat`}
          className="input"
          type="password"
          autoComplete="new-password"
          required
          value={repeat}
          onChange={(event) => onRepeat(event.target.value)}
        />
      </div>
    </>
  );
}

export function SetPasswordPage({ mode }: { mode: 'invite' | 'reset' }) {
  const api = useEndpoints();
  const client = useQueryClient();
  const [, navigate] = useLocation();
  const [token] = useState(
    () => tokenFromFragment() || (client.getQueryData<string>(PENDING_INVITATION) ?? ''),
  );
  const [password, setPassword] = useState('');
  const [repeat, setRepeat] = useState('');
  const [problem, setProblem] = useState<string | null>(null);
  const session = useSession();

  const invitation = useQuery({
    queryKey: ['invitation', token],
    queryFn: () => api.invitation(token),
    enabled: mode === 'invite' && token !== '',
    retry: false,
  });
  const accept = useMutation({
    mutationFn: mode === 'invite' ? api.acceptInvitation : api.acceptPasswordReset,
    onSuccess: (view) => {
      // A member with two factors still owes the code: the sign-in page asks for it.
      if (isChallenge(view)) {
        client.setQueryData(keys.pendingChallenge, view);
        navigate('/sign-in', { replace: true });
        return;
      }
      startSession(client, view);
      navigate('/', { replace: true });
    },
  });

  const title = mode === 'invite' ? 'Join mailverdict' : 'Choose a new password';
  const submit = (event: FormEvent) => {
    event.preventDefault();
    const found = passwordProblem(password, repeat);
    setProblem(found);
    if (!found) accept.mutate({ token, password });
  };

  if (token === '') {
    return (
      <AuthFrame title={title}>
        <p className="notice notice-error" role="alert">
          This link is incomplete: open the whole link from the e-mail or from the person who sent it.
        </p>
        <p className="auth-links">
          <Link href="/sign-in">Go to sign in</Link>
        </p>
      </AuthFrame>
    );
  }
  if (mode === 'invite' && invitation.isPending) {
    return (
      <AuthFrame title={title}>
        <Loading what="the invitation" />
      </AuthFrame>
    );
  }
  if (mode === 'invite' && invitation.isError) {
    const gone = invitation.error instanceof ApiError && invitation.error.status === 404;
    return (
      <AuthFrame title={title}>
        {gone ? (
          <p className="notice notice-error" role="alert">
            This invitation is not valid any more: it was used already or it expired (links work for 24
            hours). Ask the account owner for a new one.
          </p>
        ) : (
          <ErrorMessage action="Could not read the invitation" error={invitation.error} />
        )}
        <p className="auth-links">
          <Link href="/sign-in">Go to sign in</Link>
        </p>
      </AuthFrame>
    );
  }

  // Whether the address has a password is not told by the preview (it would tell the inviting
  // owner too; issue 26): the page learns it from its own session, or from the accept's 401.
  const hasPassword = accept.error instanceof ApiError && accept.error.code === 'unauthenticated';
  const signedInAsInvited =
    invitation.data !== undefined && session.data?.person.email === invitation.data.email;
  if (mode === 'invite' && invitation.data && (hasPassword || signedInAsInvited)) {
    return (
      <AuthFrame title={title}>
        <JoinWithSignIn token={token} email={invitation.data.email} />
      </AuthFrame>
    );
  }

  return (
    <AuthFrame title={title}>
      {mode === 'invite' && invitation.data ? (
        <p>
          You were invited as <strong>{invitation.data.email}</strong>. Choose a password to finish (this link
          works until {formatDateTime(invitation.data.expires_at)}).
        </p>
      ) : (
        <p>Choose a new password for your account. You will be signed in with it.</p>
      )}
      <form className="form" onSubmit={submit} noValidate>
        <NewPasswordFields
          idPrefix="set-password"
          password={password}
          repeat={repeat}
          onPassword={setPassword}
          onRepeat={setRepeat}
        />
        {problem ? (
          <p className="notice notice-error" role="alert">
            {problem}
          </p>
        ) : null}
        <ErrorMessage action="Could not set the password" error={accept.error} />
        <button type="submit" className="button button-primary button-wide" disabled={accept.isPending}>
          Set password and sign in
        </button>
      </form>
      {mode === 'invite' ? (
        <p className="auth-links">
          <Link
            href="/sign-in?next=%2Faccept-invite"
            onClick={() => client.setQueryData(PENDING_INVITATION, token)}
          >
            I have a password here: sign in to accept
          </Link>
        </p>
      ) : null}
    </AuthFrame>
  );
}
