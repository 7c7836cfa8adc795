/**
 * Operators (docs/security.md, "Operators"): people who run the service and sign in to its
 * operator console (built on `requireOperator`, src/dashboard/security.ts). An operator is a
 * person (`people.operator_since`), made and unmade only from the command line (`mailverdict
 * operators add|remove|list`), and must sign in with two factors: until they have enrolled they
 * reach nothing but the enrolment. An operator needs no account; one who belongs to none can still
 * sign in. Every change is a structured log line (the security log is an account's, and an
 * operator is nobody's member).
 */
import type { Logger } from 'pino';
import { AppError } from '../../errors.js';
import {
  findPersonByEmail,
  listOperators as listOperatorRows,
  setOperator,
} from '../../store/person.store.js';
import type { PersonRow } from '../../store/schema/dashboard.schema.js';
import {
  ensurePerson,
  issuePasswordLink,
  mailLink,
  normalizeEmail,
  type MembersDeps,
  type SentLink,
} from '../people/members.service.js';

export interface OperatorView {
  person_id: string;
  email: string;
  operator_since: string;
  /** Whether the person has chosen a password (an operator made afresh has not, until the link). */
  has_password: boolean;
}

function toView(person: PersonRow): OperatorView {
  return {
    person_id: person.id,
    email: person.email,
    operator_since: person.operator_since ?? '',
    has_password: person.password_hash !== null,
  };
}

export interface OperatorAdded {
  operator: OperatorView;
  /** False when the person was an operator already. */
  added: boolean;
  /** Where a person without a password chooses one; null when they have one (they sign in). */
  link: SentLink | null;
}

/**
 * Makes the address's person an operator (the person is made when the address is new). A person
 * without a password gets a one-time link to choose one (24 hours, like an invitation).
 */
export async function addOperator(
  deps: MembersDeps & { logger: Pick<Logger, 'warn' | 'info'> },
  rawEmail: string,
): Promise<OperatorAdded> {
  const email = normalizeEmail(rawEmail);
  const outcome = await deps.db.transaction().execute(async (trx) => {
    const person = await ensurePerson(trx, deps.clock, email);
    const added = await setOperator(trx, person.id, deps.clock.now().toISOString());
    const issued = person.password_hash === null ? await issuePasswordLink(trx, deps.clock, person) : null;
    const current = (await findPersonByEmail(trx, email)) ?? person;
    return { person: current, added, issued };
  });
  // The person's id, never the address (docs/security.md: no full address in info logs).
  deps.logger.info(
    { person_id: outcome.person.id, added: outcome.added, event: 'operator_added' },
    'operator added',
  );
  return {
    operator: toView(outcome.person),
    added: outcome.added,
    link: outcome.issued === null ? null : await mailLink(deps, 'password_reset', outcome.issued),
  };
}

/** Takes the operator role away (the person and their memberships stay). 404 when not an operator. */
export async function removeOperator(
  deps: Pick<MembersDeps, 'db' | 'clock'> & { logger: Pick<Logger, 'info'> },
  rawEmail: string,
): Promise<OperatorView> {
  const email = normalizeEmail(rawEmail);
  const person = await findPersonByEmail(deps.db, email);
  if (!person || !(await setOperator(deps.db, person.id, null)))
    throw new AppError('not_found', `${email} is not an operator`);
  deps.logger.info({ person_id: person.id, event: 'operator_removed' }, 'operator removed');
  return toView(person);
}

export async function listOperators(deps: Pick<MembersDeps, 'db'>): Promise<OperatorView[]> {
  return (await listOperatorRows(deps.db)).map(toView);
}
