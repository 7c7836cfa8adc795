/**
 * Migration 0023's pending changes of sign-in address on every backend: a link used once, even by
 * two processes at once, an expired one unusable, a newer one replacing the earlier, and the rows
 * going with their person.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { ManualClock } from '../../src/clock.js';
import { createAccount } from '../../src/services/accounts/accounts.service.js';
import { issueInvitation } from '../../src/services/people/members.service.js';
import {
  findPersonById,
  findUsableEmailChange,
  insertEmailChange,
  setPersonEmail,
  useEmailChange,
} from '../../src/store/person.store.js';
import { openTestStore, tableNames, testBackends, type TestStore } from '../kit/store-harness.js';

const clock = new ManualClock('2026-03-10T12:00:00.000Z');
const NOW = clock.now().toISOString();
const LATER = '2026-03-11T12:00:00.000Z';

describe.each(testBackends())('pending changes of sign-in address on %s', (backend) => {
  let store: TestStore | undefined;
  afterEach(async () => {
    await store?.close();
    store = undefined;
  });

  async function person(): Promise<string> {
    const account = await createAccount(store!.db, clock, { email: 'ops@example.org' });
    const issued = await issueInvitation(store!.db, clock, {
      accountId: account.id,
      email: 'ann@example.org',
    });
    return issued.personId;
  }

  const change = (personId: string, token: string, email = 'new@example.org') => ({
    token_hash: token,
    person_id: personId,
    new_email: email,
    created_at: NOW,
    expires_at: LATER,
    used_at: null,
  });

  it('creates its table; a link is used once, even by two processes at once', async () => {
    store = await openTestStore(backend);
    expect(await tableNames(store)).toEqual(expect.arrayContaining(['email_changes']));
    const id = await person();
    await insertEmailChange(store.db, change(id, 'a'));
    expect(await findUsableEmailChange(store.db, 'a', NOW)).toMatchObject({ new_email: 'new@example.org' });
    expect(await findUsableEmailChange(store.db, 'a', LATER)).toBeUndefined();
    const other = await store.openAnother();
    const used = await Promise.all([useEmailChange(store.db, 'a', NOW), useEmailChange(other, 'a', NOW)]);
    expect(used.filter(Boolean)).toHaveLength(1);
    expect(await findUsableEmailChange(store.db, 'a', NOW)).toBeUndefined();
  });

  it('replaces the earlier pending link, sets the address, and goes with its person', async () => {
    store = await openTestStore(backend);
    const id = await person();
    await insertEmailChange(store.db, change(id, 'a'));
    await insertEmailChange(store.db, change(id, 'b', 'newer@example.org'));
    expect(await findUsableEmailChange(store.db, 'a', NOW)).toBeUndefined();
    expect(await setPersonEmail(store.db, id, 'newer@example.org')).toBe(true);
    expect((await findPersonById(store.db, id))?.email).toBe('newer@example.org');
    await store.db.deleteFrom('members').where('person_id', '=', id).execute();
    await store.db.deleteFrom('people').where('id', '=', id).execute();
    expect(await store.db.selectFrom('email_changes').selectAll().execute()).toEqual([]);
  });
});
