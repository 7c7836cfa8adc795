/**
 * Sign in with e-mail and password, then, for a member with two factors, a code from the
 * authenticator app or a recovery code (no session exists before it). A wrong password and an
 * unknown address get the same answer from the server; too many attempts get 429 and that is
 * said in words.
 *
 * Accessible names: heading "Sign in"; fields "E-mail", "Password"; button "Sign in"; link
 * "Forgot your password?". Second step: field "Authentication code", button "Verify", button
 * "Start again".
 */
import { useMutation, useQueryClient } from '@tanstack/react-query';
import { useState, type FormEvent } from 'react';
import { Link, Redirect, useSearch } from 'wouter';
import { ApiError } from '../api/client';
import type { SecondFactorChallenge } from '../api/contract';
import { isChallenge, keys, startSession, useSession } from '../api/queries';
import { useEndpoints } from '../api/endpoints';
import { CodeField } from '../components/code-field';
import { ErrorMessage } from '../components/status';
import { AuthFrame } from './auth-frame';

/** Where to go after signing in: only a path of this site, never another origin. */
export function safeNext(search: string): string {
  const next = new URLSearchParams(search).get('next');
  return next && next.startsWith('/') && !next.startsWith('//') && !next.startsWith('/\\') ? next : '/';
}

function SecondStep({ challenge, onRestart }: { challenge: string; onRestart: () => void }) {
  const api = useEndpoints();
  const client = useQueryClient();
  const [code, setCode] = useState('');
  const verify = useMutation({
    mutationFn: api.secondFactor,
    onSuccess: (view) => startSession(client, view),
    onError: (error) => {
      // The challenge expired or was used: only a new sign-in helps.
      if (error instanceof ApiError && error.code === 'unauthenticated') onRestart();
    },
  });
  const submit = (event: FormEvent) => {
    event.preventDefault();
    if (code.trim() !== '') verify.mutate({ challenge, code: code.trim() });
  };
  return (
    <form className="form" onSubmit={submit} noValidate>
      <p>Enter the 6-digit code from your authenticator app, or one of your recovery codes.</p>
      <CodeField
        id="sign-in-code"
        label="Authentication code"
        inputMode="text"
        required
        value={code}
        onChange={setCode}
      />
      <ErrorMessage action="Could not sign in" error={verify.error} />
      <button type="submit" className="button button-primary button-wide" disabled={verify.isPending}>
        {verify.isPending ? 'Verifying…' : 'Verify'}
      </button>
      <button type="button" className="button button-wide" onClick={onRestart}>
        Start again
      </button>
    </form>
  );
}

export function SignInPage() {
  const api = useEndpoints();
  const client = useQueryClient();
  const session = useSession();
  const search = useSearch();
  const [email, setEmail] = useState('');
  const [password, setPassword] = useState('');
  // A reset link used by a member with two factors leaves its challenge here.
  const [challenge, setChallenge] = useState<string | null>(
    () => client.getQueryData<SecondFactorChallenge>(keys.pendingChallenge)?.challenge ?? null,
  );
  const [restarted, setRestarted] = useState(false);
  const signIn = useMutation({
    mutationFn: api.signIn,
    onSuccess: (answer) => {
      if (isChallenge(answer)) {
        setPassword('');
        setChallenge(answer.challenge);
      } else startSession(client, answer);
    },
  });

  if (session.data) return <Redirect to={safeNext(search)} replace />;

  const restart = () => {
    client.removeQueries({ queryKey: keys.pendingChallenge });
    signIn.reset();
    setChallenge(null);
    setRestarted(true);
  };
  const submit = (event: FormEvent) => {
    event.preventDefault();
    setRestarted(false);
    signIn.mutate({ email: email.trim(), password });
  };
  return (
    <AuthFrame title="Sign in">
      {challenge !== null ? (
        <SecondStep challenge={challenge} onRestart={restart} />
      ) : (
        <form className="form" onSubmit={submit} noValidate>
          {restarted ? (
            <p className="notice" role="status">
              Sign in again with your password.
            </p>
          ) : null}
          <div className="field">
            <label htmlFor="sign-in-email">E-mail</label>
            <input
              id="sign-in-email"
              className="input"
              type="email"
              autoComplete="username"
              required
              value={email}
              onChange={(event) => setEmail(event.target.value)}
            />
          </div>
          <div className="field">
            <label htmlFor="sign-in-password">Password</label>
            <input
              id="sign-in-password"
              className="input"
              type="password"
              autoComplete="current-password"
              required
              value={password}
              onChange={(event) => setPassword(event.target.value)}
            />
          </div>
          <ErrorMessage action="Could not sign in" error={signIn.error} />
          <button type="submit" className="button button-primary button-wide" disabled={signIn.isPending}>
            {signIn.isPending ? 'Signing in…' : 'Sign in'}
          </button>
        </form>
      )}
      <p className="auth-links">
        <Link href="/forgot-password">Forgot your password?</Link>
      </p>
    </AuthFrame>
  );
}
