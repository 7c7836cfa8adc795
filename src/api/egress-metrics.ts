/**
 * The reputation guard on `/metrics`: `mailverdict_egress_state{egress, state}` is 1 for the
 * state each egress is in and 0 for the others (ok, listed, degraded), read when scraped.
 */
import { Gauge, type Registry } from 'prom-client';
import type { EgressStatus } from '../engine/egress/egress-guard.js';
import { EGRESS_STATES } from '../engine/egress/egress-health.js';

export function registerEgressMetrics(registry: Registry, statuses: () => readonly EgressStatus[]): void {
  new Gauge({
    name: 'mailverdict_egress_state',
    help: 'Health of each egress (source address, proxy or default route): 1 for its state (ok, listed on a blocklist, degraded by blocks seen at run time), 0 for the others. Listed and degraded egresses open no new sessions.',
    labelNames: ['egress', 'state'],
    registers: [registry],
    collect() {
      this.reset();
      for (const status of statuses())
        for (const state of EGRESS_STATES)
          this.set({ egress: status.egress, state }, state === status.state ? 1 : 0);
    },
  });
}
