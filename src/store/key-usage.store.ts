/**
 * When each API key was last used, beside `api_keys` rather than in it: that table is watched by
 * the key cache (a write to it empties every process's cache), and this one is written once a
 * minute per key in use (services/keys/key-usage.service.ts).
 */
import type { Executor } from './executor.js';

/** Records a use at `at`; an older time never overwrites a newer one (processes race). */
export async function recordKeyUse(db: Executor, keyId: string, at: string): Promise<void> {
  await db
    .insertInto('api_key_usage')
    .values({ key_id: keyId, last_used_at: at })
    .onConflict((oc) =>
      oc
        .column('key_id')
        .doUpdateSet((eb) => ({ last_used_at: eb.ref('excluded.last_used_at') }))
        .where('api_key_usage.last_used_at', '<', at),
    )
    .execute();
}

/** Last use of each of the account's keys that has one, by key id. */
export async function lastUsesOfAccountKeys(db: Executor, accountId: string): Promise<Map<string, string>> {
  const rows = await db
    .selectFrom('api_key_usage')
    .innerJoin('api_keys', 'api_keys.id', 'api_key_usage.key_id')
    .select(['api_key_usage.key_id', 'api_key_usage.last_used_at'])
    .where('api_keys.account_id', '=', accountId)
    .execute();
  return new Map(rows.map((r) => [r.key_id, r.last_used_at]));
}
