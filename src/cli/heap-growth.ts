/**
 * How far V8 lets the JavaScript heap grow past what the last full collection kept, for the
 * long-running commands (`serve`, `worker`). On a machine with a few GiB, V8 allows up to 4×:
 * a batch's run and download make hundreds of MB of short-lived strings, which pile up to that
 * bound before a full collection frees them (a 200,000-address batch of 254-character addresses
 * peaked at 463 MB of RSS through `serve`, with 43 MB of the heap live after a full GC). Growth
 * bounded at 30% peaked at 276 MB on the same cycle, in about the same time (`npm run
 * bench:batch:cycle`, docs/benchmarks.md). Nothing else changes: the heap's upper limit stays V8's.
 */
import { setFlagsFromString } from 'node:v8';

export const HEAP_GROWING_PERCENT = 30;

/** Bounds the heap's growth factor unless the process was started with its own `--heap-growing-percent`. */
export function boundHeapGrowth(): void {
  const given = [...process.execArgv, process.env.NODE_OPTIONS ?? ''].some((arg) =>
    /heap[-_]growing[-_]percent/.test(arg),
  );
  // Read by V8 each time it sets the next collection's limit, so setting it at run time takes effect.
  if (!given) setFlagsFromString(`--heap-growing-percent=${HEAP_GROWING_PERCENT}`);
}
