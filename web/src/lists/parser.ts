/**
 * The page's handle on a list being prepared: a `ListSession` (analyse.ts) in a worker, so that
 * 500,000 rows are read without freezing the page. Pages receive a `ListParserFactory` from the
 * app's services; component tests give them `inlineListParser` (inline-parser.ts), the same
 * session in the page's thread, since jsdom has no workers.
 */
import type { ColumnChoice, ListAnalysis, ListSource } from './list-types';
import type { WorkerReply, WorkerRequest } from './parse.worker';

export type Progress = (fraction: number) => void;

type WorkerCall = WorkerRequest extends infer R ? (R extends WorkerRequest ? Omit<R, 'id'> : never) : never;

export interface ListParser {
  load(onProgress: Progress): Promise<ListAnalysis>;
  analyse(choice: ColumnChoice, onProgress: Progress): Promise<ListAnalysis>;
  /** What POST /lists receives: CSV text. */
  body(): Promise<Blob>;
  dispose(): void;
}

export type ListParserFactory = (source: ListSource) => ListParser;

/** Runs the session in a dedicated worker, one per list, ended by `dispose`. */
export const workerListParser: ListParserFactory = (source) => {
  const worker = new Worker(new URL('./parse.worker.ts', import.meta.url), {
    type: 'module',
    name: 'list-parser',
  });
  let next = 0;
  const pending = new Map<
    number,
    { resolve: (value: never) => void; reject: (error: Error) => void; onProgress: Progress }
  >();
  worker.onmessage = (event: MessageEvent<WorkerReply>) => {
    const reply = event.data;
    const call = pending.get(reply.id);
    if (!call) return;
    if (reply.type === 'progress') {
      call.onProgress(reply.fraction);
      return;
    }
    pending.delete(reply.id);
    if (reply.type === 'error') call.reject(new Error(reply.message));
    else call.resolve(reply.result as never);
  };
  worker.onerror = (event) => {
    event.preventDefault();
    const error = new Error(event.message || 'the file reader stopped');
    for (const call of pending.values()) call.reject(error);
    pending.clear();
  };
  const call = <T>(request: WorkerCall, onProgress: Progress = () => {}): Promise<T> =>
    new Promise<T>((resolve, reject) => {
      const id = next++;
      pending.set(id, { resolve, reject, onProgress });
      const message: WorkerRequest = { ...request, id };
      worker.postMessage(message);
    });
  return {
    load: (onProgress) => call<ListAnalysis>({ type: 'load', source }, onProgress),
    analyse: (choice, onProgress) => call<ListAnalysis>({ type: 'analyse', choice }, onProgress),
    body: () => call<Blob>({ type: 'body' }),
    dispose: () => {
      worker.terminate();
      for (const pendingCall of pending.values()) pendingCall.reject(new Error('cancelled'));
      pending.clear();
    },
  };
};
