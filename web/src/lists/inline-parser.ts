import { ListSession } from './analyse';
import type { ListParserFactory } from './parser';

/** The list session in the page's own thread (component tests; jsdom has no workers). */
export const inlineListParser: ListParserFactory = (source) => {
  const session = new ListSession(source);
  return {
    load: (onProgress) => session.load(onProgress),
    analyse: (choice, onProgress) => session.analyse(choice, onProgress),
    body: () => session.body(),
    dispose: () => {},
  };
};
