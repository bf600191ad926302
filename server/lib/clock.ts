/** The time, behind an interface so tests can move it (expiry of signed URLs). */
export interface Clock {
  /** Milliseconds since the Unix epoch. */
  now(): number;
}

export const systemClock: Clock = { now: () => Date.now() };
