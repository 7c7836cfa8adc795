/** Time is injected everywhere so that tests can move it (billing periods, retention, leases). */
export interface Clock {
  now(): Date;
}

export const systemClock: Clock = { now: () => new Date() };

/** A clock a test can set and advance. */
export class ManualClock implements Clock {
  #ms: number;

  constructor(start: Date | string | number = '2026-01-15T12:00:00.000Z') {
    this.#ms = new Date(start).getTime();
  }

  now(): Date {
    return new Date(this.#ms);
  }

  set(at: Date | string | number): void {
    this.#ms = new Date(at).getTime();
  }

  advance(ms: number): void {
    this.#ms += ms;
  }
}

export const SECOND = 1000;
export const MINUTE = 60 * SECOND;
export const HOUR = 60 * MINUTE;
export const DAY = 24 * HOUR;
