/**
 * How guessable a new dashboard password is, estimated by zxcvbn-ts (the maintained TypeScript
 * port of Dropbox's zxcvbn: dictionaries of common passwords, names and words, keyboard patterns,
 * repeats, dates, and the person's own address). A length rule alone let `aaaaaaaaaa` and the
 * member's own e-mail address through (issue 16).
 */
import { ZxcvbnFactory } from '@zxcvbn-ts/core';
import * as common from '@zxcvbn-ts/language-common';
import * as english from '@zxcvbn-ts/language-en';
import { AppError } from '../../errors.js';

/** zxcvbn's scale: 3 is "safely unguessable: moderate protection from an offline slow-hash attack". */
export const MIN_PASSWORD_SCORE = 3;

let factory: ZxcvbnFactory | undefined;

/** Built at first use: the dictionaries take a few MB and some milliseconds to load. */
function estimator(): ZxcvbnFactory {
  factory ??= new ZxcvbnFactory({
    translations: english.translations,
    graphs: common.adjacencyGraphs,
    dictionary: { ...common.dictionary, ...english.dictionary },
  });
  return factory;
}

/**
 * Refuses with 422 `weak_password` a password zxcvbn scores below `MIN_PASSWORD_SCORE`, taking the
 * member's address (and its parts) and the service's name as words an attacker would try first.
 */
export function refuseWeakPassword(password: string, email: string): void {
  const [local = '', domain = ''] = email.split('@');
  const inputs = [email, local, ...local.split(/[._+-]/), ...domain.split('.'), 'mailverdict', 'dashboard'];
  const result = estimator().check(
    password.slice(0, 256),
    inputs.filter((w) => w.length > 2),
  );
  if (result.score >= MIN_PASSWORD_SCORE) return;
  const hint = result.feedback.warning ?? result.feedback.suggestions[0] ?? null;
  throw new AppError(
    'weak_password',
    `this password is too easy to guess${hint ? ` (${hint.replace(/\.$/, '').toLowerCase()})` : ''}; choose a longer one, for instance a few unrelated words`,
  );
}
