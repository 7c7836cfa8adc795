import type { ApiDeps } from '../api/deps.js';
import type { MemberMailer } from '../services/member-mail.js';

/** What the dashboard's plugins are handed: the API's collaborators and the dashboard's own. */
export interface DashboardDeps extends ApiDeps {
  /** Where the built app (index.html, assets/) is. */
  webDir: string;
  /** Null: no SMTP relay, links are only shown. */
  mailer: MemberMailer | null;
  /** The session cookie's attributes, from the public base URL (security.ts). */
  cookie: { name: string; secure: boolean };
}
