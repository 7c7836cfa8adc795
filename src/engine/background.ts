/**
 * Calls to the shared coordination that nothing waits for (a health update, a cache write): kept
 * so that closing the engine waits for them, and so that a failure is reported, never thrown.
 */
export class BackgroundTasks {
  readonly #tasks = new Set<Promise<void>>();
  readonly #failed: (error: unknown, operation: string) => void;

  constructor(failed: (error: unknown, operation: string) => void) {
    this.#failed = failed;
  }

  track(operation: string, task: Promise<unknown>): void {
    const tracked: Promise<void> = task
      .then(
        () => undefined,
        (error: unknown) => this.#failed(error, operation),
      )
      .finally(() => this.#tasks.delete(tracked));
    this.#tasks.add(tracked);
  }

  /** Resolves when the tasks tracked so far have ended. */
  async drain(): Promise<void> {
    await Promise.all([...this.#tasks]);
  }
}
