/** The first start's bootstrap (migration 0016; docs/dashboard.md, "The first start"). */
import type { Selectable } from 'kysely';

/** Where the bootstrap's keys went: printed to a terminal, or written to the keys file. */
export type BootstrapDelivery = 'terminal' | 'file';

export interface BootstrapTable {
  /** Always `first`: one bootstrap per store. */
  id: string;
  account_id: string;
  /** The keys the bootstrap made last (each start that completes it replaces them). */
  live_key_id: string;
  test_key_id: string;
  created_at: string;
  /** 1, plus one per start that completed it; a start claims its completion by bumping it. */
  generation: number;
  /** When the keys reached someone; null: no start has shown them yet. */
  delivered_at: string | null;
  delivered_to: BootstrapDelivery | null;
}

export type BootstrapRow = Selectable<BootstrapTable>;

export interface BootstrapTables {
  bootstrap: BootstrapTable;
}
