import type { ReactNode } from 'react';
import { PageTitle } from '../components/shell';

/** The frame of the pages seen before signing in: a centred card under the product's name. */
export function AuthFrame({ title, children }: { title: string; children: ReactNode }) {
  return (
    <main id="main" className="auth">
      <div className="auth-card">
        <p className="brand auth-brand">
          <img src="/favicon.svg" alt="" width="28" height="28" />
          mailverdict
        </p>
        <PageTitle title={title}>{title}</PageTitle>
        {children}
      </div>
    </main>
  );
}
