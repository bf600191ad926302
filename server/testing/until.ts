/** Waiting in tests for an event that shows itself only in state: a condition polled until it holds. */

/** Polls `check` until it answers something truthy, and answers that; fails after `timeoutMs`. */
export async function until<T>(check: () => Promise<T | undefined | null | false> | T | undefined | null | false, what: string, timeoutMs = 15_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await check();
    if (value) return value;
    if (Date.now() > deadline) throw new Error(`Gave up waiting for ${what} after ${timeoutMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}
