/**
 * Child process of the Postfix-like batch benchmark (bench/kit/postfix-run.ts): the Postfix-like
 * MTA (test/kit/postfix-like-mta.ts) on every MX host of the list and the fake DNS server, with
 * the protocol of bench/kit/bench-child.ts. Exits when its parent goes away.
 */
import type { PostfixRules } from '../../test/kit/postfix-like-mta.js';
import { startPostfixLikeMta } from '../../test/kit/postfix-like-mta.js';
import { benchRcptRule } from '../fake-mta-pipelining.js';
import { serveBenchChild } from './bench-child.js';

export interface PostfixWorld {
  hosts: string[];
  latencyMs: number;
  /** domain -> index into `hosts` of its MX. */
  domains: Record<string, number>;
  catchAllDomains: string[];
  rules: PostfixRules;
}

const world = JSON.parse(process.argv[2] ?? '{}') as PostfixWorld;
const rcpt = benchRcptRule(new Set(world.catchAllDomains));
const mta = await startPostfixLikeMta({
  hosts: world.hosts,
  latencyMs: world.latencyMs,
  ...world.rules,
  rcpt: (address) => rcpt(address),
});
await serveBenchChild(world, mta);
