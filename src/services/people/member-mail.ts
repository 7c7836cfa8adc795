/**
 * The e-mails of a dashboard person: the ones that carry a link (an invitation, a password reset,
 * the confirmation of a new sign-in address) and the security notices (issue 26: wrong second
 * factors after a correct password, two factors turned on). Sent through the process's mailer
 * (mailer.ts); without a relay there is no mailer and the link is only shown (CLI, the inviter's
 * screen).
 */
import type { Mailer } from '../mailer.js';
import type { MemberTokenKind } from '../../store/schema/dashboard.schema.js';

/** What a security notice tells its person (never a secret; the client address is not one). */
export type SecurityNotice =
  | {
      /** Wrong second factors after a correct password: someone may know the password. */
      kind: 'second_factor_failures';
      failures: number;
      clientIp: string | null;
      at: string;
    }
  | {
      /** Two-factor sign-in was turned on (a stolen session could otherwise do it unseen). */
      kind: 'two_factor_enabled';
      clientIp: string | null;
      at: string;
    };

/** What a dashboard link e-mail is for. */
export type MemberMailKind = MemberTokenKind | 'email_change';

export interface MemberMailer {
  /** Sends the link; rejects when the relay does not take the message. */
  send(to: string, kind: MemberMailKind, link: string, expiresAt: string): Promise<void>;
  /** Sends a security notice; rejects when the relay does not take the message. */
  sendNotice(to: string, notice: SecurityNotice): Promise<void>;
}

export function createMemberMailer(mailer: Mailer | null | undefined): MemberMailer | null {
  if (!mailer) return null;
  return {
    send: (to, kind, link, expiresAt) => mailer.send({ to, ...memberMessage(kind, link, expiresAt) }),
    sendNotice: (to, notice) => mailer.send({ to, ...noticeMessage(notice) }),
  };
}

export function memberMessage(
  kind: MemberMailKind,
  link: string,
  expiresAt: string,
): { subject: string; text: string } {
  if (kind === 'email_change')
    return {
      subject: 'Confirm your new mailverdict sign-in address',
      text: `${[
        'Someone signed in to a mailverdict dashboard asked to sign in with this address from now on.',
        '',
        'Open this link to confirm it:',
        link,
        '',
        'If it was not you, ignore this message: nothing changes.',
        '',
        `The link works once, until ${expiresAt}.`,
      ].join('\n')}\n`,
    };
  const lines =
    kind === 'invitation'
      ? [
          'You have been invited to a mailverdict account.',
          '',
          'Open this link to choose your password and sign in to the dashboard:',
          link,
        ]
      : [
          'Someone asked to reset the password of your mailverdict dashboard account.',
          '',
          'Open this link to choose a new one:',
          link,
          '',
          'If it was not you, ignore this message: your password stays as it is.',
        ];
  return {
    subject: kind === 'invitation' ? 'Your mailverdict invitation' : 'Reset your mailverdict password',
    text: `${[...lines, '', `The link works once, until ${expiresAt}.`].join('\n')}\n`,
  };
}

export function noticeMessage(notice: SecurityNotice): { subject: string; text: string } {
  const from = notice.clientIp === null ? '' : ` from ${notice.clientIp}`;
  const lines =
    notice.kind === 'second_factor_failures'
      ? [
          `Someone signed in to your mailverdict dashboard account with your password${from}, then gave`,
          `${notice.failures} wrong two-factor codes (last at ${notice.at}).`,
          '',
          'If it was not you, your password is known to someone else: change it now (Settings,',
          '"Password"). Your second factor kept them out so far.',
        ]
      : [
          `Two-factor sign-in was turned on for your mailverdict dashboard account${from}`,
          `at ${notice.at}.`,
          '',
          'If it was not you, someone holds one of your sessions: sign in, end your other sessions',
          '(Settings, "Sessions"), change your password, and ask the operator to reset your second',
          'factor if you cannot sign in.',
        ];
  return {
    subject:
      notice.kind === 'second_factor_failures'
        ? 'Wrong two-factor codes after your mailverdict password'
        : 'Two-factor sign-in turned on for your mailverdict account',
    text: `${lines.join('\n')}\n`,
  };
}
