/**
 * fflate for the XLSX reader (vite.config.ts aliases `fflate` here). fflate's asynchronous `unzip`
 * starts a worker from a blob: URL for entries over 512 KB, which the dashboard's CSP
 * (`script-src 'self'`) refuses, and the read would never finish. The reader already runs inside
 * our own worker, so unzipping synchronously costs the page nothing.
 *
 * The unpacked size is bounded before anything is inflated (issue 16: a 300 KB file that unpacks
 * to 300 MiB hung the page): by the sizes the archive declares, at most `unpackedLimit` bytes in
 * all. fflate inflates each entry into a buffer of its declared size, so an archive that lies
 * about a size cannot grow past it.
 */
import { unzipSync, type Unzipped, type UnzipOptions } from 'fflate/browser';

export * from 'fflate/browser';

type UnzipCallback = (error: Error | null, data: Unzipped | null) => void;

const MIB = 1024 * 1024;

/**
 * The most a workbook of `packedBytes` may unpack to: 100 times its size (spreadsheets compress
 * 5 to 20 times), at least 64 MiB, at most 256 MiB (a 500,000-row list unpacks to about 150 MiB).
 */
export function unpackedLimit(packedBytes: number): number {
  return Math.min(256 * MIB, Math.max(64 * MIB, 100 * packedBytes));
}

export function unzip(
  data: Uint8Array,
  options: UnzipOptions | UnzipCallback,
  callback?: UnzipCallback,
): () => void {
  const done = typeof options === 'function' ? options : callback;
  const opts = typeof options === 'function' ? {} : options;
  const limit = unpackedLimit(data.length);
  let unpacked = 0;
  const filter: UnzipOptions['filter'] = (file) => {
    unpacked += file.originalSize;
    if (unpacked > limit)
      throw new Error(
        `this workbook unpacks to more than ${Math.round(limit / MIB)} MiB; save the sheet as CSV and upload that`,
      );
    return opts.filter?.(file) ?? true;
  };
  queueMicrotask(() => {
    let result: Unzipped;
    try {
      result = unzipSync(data, { ...opts, filter });
    } catch (error) {
      done?.(error instanceof Error ? error : new Error(String(error)), null);
      return;
    }
    done?.(null, result);
  });
  return () => {};
}
