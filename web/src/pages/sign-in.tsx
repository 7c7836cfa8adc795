/**
 * Sign in with e-mail and password. A wrong password and an unknown address get the same answer
 * from the server; too many attempts get 429 and that is said in words.
 *
 * Accessible names: heading "Sign in"; fields "E-mail", "Password"; button "Sign in"; link
 * "Forgot your password?".
 */
import { useMutation, useQueryClient } from '@tanstack/react-query';
import { useState, type FormEvent } from 'react';
import { Link, Redirect, useSearch } from 'wouter';
import { startSession, useSession } from '../api/queries';
import { useEndpoints } from '../api/endpoints';
import { ErrorMessage } from '../components/status';
import { AuthFrame } from './auth-frame';

/** Where to go after signing in: only a path of this site, never another origin. */
export function safeNext(search: string): string {
  const next = new URLSearchParams(search).get('next');
  return next && next.startsWith('/') && !next.startsWith('//') && !next.startsWith('/\\') ? next : '/';
}

export function SignInPage() {
  const api = useEndpoints();
  const client = useQueryClient();
  const session = useSession();
  const search = useSearch();
  const [email, setEmail] = useState('');
  const [password, setPassword] = useState('');
  const signIn = useMutation({
    mutationFn: api.signIn,
    onSuccess: (view) => startSession(client, view),
  });

  if (session.data) return <Redirect to={safeNext(search)} replace />;

  const submit = (event: FormEvent) => {
    event.preventDefault();
    signIn.mutate({ email: email.trim(), password });
  };
  return (
    <AuthFrame title="Sign in">
      <form className="form" onSubmit={submit} noValidate>
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
      <p className="auth-links">
        <Link href="/forgot-password">Forgot your password?</Link>
      </p>
    </AuthFrame>
  );
}
