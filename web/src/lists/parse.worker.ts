/**
 * The list reader's thread: one `ListSession` per worker, driven by messages from parser.ts.
 * Progress is posted as the file is read so the page can show it.
 */
import { ListSession, type ColumnChoice, type ListAnalysis, type ListSource } from './analyse';

export type WorkerRequest =
  | { id: number; type: 'load'; source: ListSource }
  | { id: number; type: 'analyse'; choice: ColumnChoice }
  | { id: number; type: 'body' };

export type WorkerReply =
  | { id: number; type: 'progress'; fraction: number }
  | { id: number; type: 'done'; result: ListAnalysis | Blob }
  | { id: number; type: 'error'; message: string };

// The DOM lib types `self` as a Window; in a dedicated worker it is the worker's scope.
const scope = self as unknown as {
  onmessage: ((event: MessageEvent<WorkerRequest>) => void) | null;
  postMessage(message: WorkerReply): void;
};

let session: ListSession | null = null;

async function handle(request: WorkerRequest): Promise<ListAnalysis | Blob> {
  const progress = (fraction: number) => scope.postMessage({ id: request.id, type: 'progress', fraction });
  switch (request.type) {
    case 'load':
      session = new ListSession(request.source);
      return session.load(progress);
    case 'analyse':
      if (!session) throw new Error('no list is loaded');
      return session.analyse(request.choice, progress);
    case 'body':
      if (!session) throw new Error('no list is loaded');
      return session.body();
  }
}

scope.onmessage = (event) => {
  const request = event.data;
  handle(request).then(
    (result) => scope.postMessage({ id: request.id, type: 'done', result }),
    (error: unknown) =>
      scope.postMessage({
        id: request.id,
        type: 'error',
        message: error instanceof Error ? error.message : String(error),
      }),
  );
};
