/**
 * What the commands that hand out a dashboard link share (`members invite|reset`, `accounts
 * create`): the store with the link and relay settings of the flags, and the link printed with
 * its warnings. The link is a secret: it is printed, never logged.
 */
import pino from 'pino';
import { systemClock } from '../clock.js';
import { defaultPublicBaseUrl, loadConfig, type Config } from '../config.js';
import { createMailer } from '../services/mailer.js';
import { createMemberMailer } from '../services/people/member-mail.js';
import type { MembersDeps, SentLink } from '../services/people/members.service.js';
import type { Executor } from '../store/executor.js';
import { settingsFlags, withStore, type StoreFlags } from './cli-support.js';

export interface LinkFlags extends StoreFlags {
  email: string;
  publicBaseUrl?: string;
  smtpRelayUrl?: string;
  notifyFrom?: string;
}

/** Runs `fn` with the members' deps: the store, and the link and relay settings of the flags. */
export async function withMembers<T>(
  flags: LinkFlags,
  fn: (deps: MembersDeps, settings: Readonly<Config>) => Promise<T>,
): Promise<T> {
  const settings: Readonly<Config> = loadConfig(settingsFlags({ ...flags }));
  const relay = createMailer(settings);
  const mailer = createMemberMailer(relay);
  try {
    return await withStore(flags, (db: Executor) =>
      fn(
        {
          db,
          clock: systemClock,
          config: settings,
          mailer,
          logger: pino({ level: 'warn' }, pino.destination(2)),
        },
        settings,
      ),
    );
  } finally {
    relay?.close();
  }
}

/**
 * Said under a link built on the default base URL: this command does not know where the server
 * listens (issue 16: a server on another port got links to 8080 without a word).
 */
function defaultBaseNote(config: Readonly<Config>): string {
  if (config.publicBaseUrl !== defaultPublicBaseUrl(config.host, config.port)) return '';
  return (
    'No --public-base-url was given, so the link names the default host and port; if the server ' +
    'listens elsewhere or behind a proxy, give the same --public-base-url (or ' +
    'MAILVERDICT_PUBLIC_BASE_URL) as the server.'
  );
}

export function linkText(what: string, sent: SentLink, config: Readonly<Config>): string {
  return [
    what,
    `This link works once, until ${sent.expiresAt} (24 h); it is a secret, hand it to ${sent.email} only:`,
    `  ${sent.link}`,
    defaultBaseNote(config),
    sent.emailed ? `It was also e-mailed to ${sent.email}.` : '',
  ]
    .filter((line) => line !== '')
    .join('\n');
}

export function linkJson(sent: SentLink) {
  return {
    email: sent.email,
    member: sent.member,
    link: sent.link,
    expires_at: sent.expiresAt,
    emailed: sent.emailed,
  };
}
