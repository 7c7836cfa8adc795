/**
 * The link e-mailed to a new sign-in address (docs/dashboard.md, "Changing the sign-in address"):
 * `/confirm-email#<token>`. Opening it confirms the change at once (the token is in the fragment,
 * so it reaches no server log); the page says which address now signs in.
 *
 * Accessible names: heading "Confirm your new address"; link "Sign in".
 */
import { useMutation } from '@tanstack/react-query';
import { useEffect } from 'react';
import { Link } from 'wouter';
import { useEndpoints } from '../api/endpoints';
import { ErrorMessage, Loading } from '../components/status';
import { AuthFrame } from './auth-frame';

export function ConfirmEmailPage() {
  const api = useEndpoints();
  const confirm = useMutation({ mutationFn: api.confirmEmailChange });
  const { mutate } = confirm;
  useEffect(() => {
    mutate({ token: window.location.hash.slice(1) });
  }, [mutate]);
  return (
    <AuthFrame title="Confirm your new address">
      {confirm.isPending ? <Loading what="the confirmation" /> : null}
      <ErrorMessage action="Could not confirm the address" error={confirm.error} />
      {confirm.data ? (
        <p className="notice notice-ok" role="status">
          Done: you sign in with {confirm.data.email} from now on.
        </p>
      ) : null}
      <p className="auth-links">
        <Link href="/sign-in">Sign in</Link>
      </p>
    </AuthFrame>
  );
}
