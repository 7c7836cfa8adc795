/**
 * Text a person or an operator gives that is stored and shown again (an address, a key's name): no
 * control character (ESC, BEL, CR, NUL…), which would reach an operator's terminal raw through
 * `members list` or `accounts show`, or a log line (issue 16). The dashboard's contract refuses
 * them at its edge too (`Printable` in src/dashboard/contract.ts); this is the services' own check,
 * so that the CLI is held to it as well.
 */
import { AppError } from '../errors.js';

// eslint-disable-next-line no-control-regex -- matching control characters is the point
const CONTROL = /[\u0000-\u001F\u007F-\u009F]/;

/** 422 `invalid_request` naming `field` when `value` holds a control character. */
export function refuseControlCharacters(field: string, value: string): void {
  if (CONTROL.test(value))
    throw new AppError('invalid_request', `${field} must not contain control characters (ESC, CR, NUL…)`);
}
