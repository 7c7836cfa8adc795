import { describeError } from '../api/client';

/** A failure in words, with the request id to quote (from `describeError`). */
export function ErrorMessage({ action, error }: { action: string; error: unknown }) {
  if (!error) return null;
  return (
    <p className="notice notice-error" role="alert">
      {describeError(action, error)}
    </p>
  );
}

export function Loading({ what }: { what: string }) {
  return (
    <p className="loading" role="status">
      Loading {what}…
    </p>
  );
}

export function EmptyState({ children }: { children: React.ReactNode }) {
  return <div className="empty">{children}</div>;
}
