/**
 * Ask for a password-reset link. The server answers 202 whatever the address, so the page says
 * the same thing in every case (nobody learns who is a member). Without a mail relay nothing is
 * sent, and the operator's CLI (`mailverdict members reset`) makes the link instead.
 *
 * Accessible names: heading "Reset your password"; field "E-mail"; button "Send reset link";
 * link "Back to sign in".
 */
import { useMutation } from '@tanstack/react-query';
import { useState, type FormEvent } from 'react';
import { Link } from 'wouter';
import { useEndpoints } from '../api/endpoints';
import { ErrorMessage } from '../components/status';
import { AuthFrame } from './auth-frame';

export function ForgotPasswordPage() {
  const api = useEndpoints();
  const [email, setEmail] = useState('');
  const request = useMutation({
    mutationFn: api.requestPasswordReset,
  });
  const submit = (event: FormEvent) => {
    event.preventDefault();
    request.mutate({ email: email.trim() });
  };
  return (
    <AuthFrame title="Reset your password">
      {request.isSuccess ? (
        <p className="notice notice-ok" role="status">
          If {email.trim()} belongs to a member, a link to choose a new password is on its way (it works for
          24 hours). No e-mail? The service may not send mail: ask the operator for a reset link.
        </p>
      ) : (
        <form className="form" onSubmit={submit} noValidate>
          <p className="muted">We will e-mail you a link to choose a new password.</p>
          <div className="field">
            <label htmlFor="forgot-email">E-mail</label>
            <input
              id="forgot-email"
              className="input"
              type="email"
              autoComplete="username"
              required
              value={email}
              onChange={(event) => setEmail(event.target.value)}
            />
          </div>
          <ErrorMessage action="Could not ask for a reset link" error={request.error} />
          <button type="submit" className="button button-primary button-wide" disabled={request.isPending}>
            Send reset link
          </button>
        </form>
      )}
      <p className="auth-links">
        <Link href="/sign-in">Back to sign in</Link>
      </p>
    </AuthFrame>
  );
}
