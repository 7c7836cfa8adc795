/**
 * fflate for the XLSX reader (vite.config.ts aliases `fflate` here). fflate's asynchronous `unzip`
 * starts a worker from a blob: URL for entries over 512 KB, which the dashboard's CSP
 * (`script-src 'self'`) refuses, and the read would never finish. The reader already runs inside
 * our own worker, so unzipping synchronously costs the page nothing.
 */
import { unzipSync, type Unzipped, type UnzipOptions } from 'fflate/browser';

export * from 'fflate/browser';

type UnzipCallback = (error: Error | null, data: Unzipped | null) => void;

export function unzip(
  data: Uint8Array,
  options: UnzipOptions | UnzipCallback,
  callback?: UnzipCallback,
): () => void {
  const done = typeof options === 'function' ? options : callback;
  const opts = typeof options === 'function' ? {} : options;
  queueMicrotask(() => {
    let result: Unzipped;
    try {
      result = unzipSync(data, opts);
    } catch (error) {
      done?.(error instanceof Error ? error : new Error(String(error)), null);
      return;
    }
    done?.(null, result);
  });
  return () => {};
}
