/**
 * The tus lock of resumable uploads (the portal's and project members'): one request at a time works on an upload's bytes.
 * @tus/server's own MemoryLocker makes a waiting request poll in a
 * setImmediate loop, so that one slow PATCH and a crowd of requests for the
 * same upload keep a core busy; here a waiter is a promise in a queue,
 * settled when the holder unlocks (it is handed the lock then), when its
 * request is aborted, or when it gives up after the timeout. Waiting costs
 * no CPU.
 *
 * The Locker contract of @tus/utils: "If the lock is already held by another
 * request, the 'cancelReq' callback is provided to signal the current lock
 * holder to release the lock" — a new request for an upload asks the one
 * holding it (a PATCH on a half-open connection, say) to let go, which tus
 * does after its lock drain timeout.
 */
import { ERRORS, type Lock, type Locker, type RequestRelease } from '@tus/server';

interface Waiter {
  release: RequestRelease;
  grant: () => void;
}

interface Held {
  /** The holder's callback: asks it to release the lock. */
  release: RequestRelease;
  /** First come, first served. */
  queue: Waiter[];
}

export class EventLocker implements Locker {
  readonly #held = new Map<string, Held>();
  readonly #timeoutMs: number;

  constructor(options: { acquireLockTimeoutMs?: number } = {}) {
    this.#timeoutMs = options.acquireLockTimeoutMs ?? 30_000;
  }

  newLock(id: string): Lock {
    let mine = false;
    return {
      lock: async (signal, release) => {
        if (mine) throw new Error(`the tus lock of ${id} is taken twice by one request`);
        await this.#acquire(id, signal, release);
        mine = true;
      },
      unlock: async () => {
        if (!mine) throw new Error(`the tus lock of ${id} is released by a request that does not hold it`);
        mine = false;
        this.#handOn(id);
      },
    };
  }

  /** How many requests wait for the lock of this upload (for tests). */
  waiting(id: string): number {
    return this.#held.get(id)?.queue.length ?? 0;
  }

  #acquire(id: string, signal: AbortSignal, release: RequestRelease): Promise<void> {
    if (signal.aborted) return Promise.reject(ERRORS.ABORTED);
    const held = this.#held.get(id);
    if (!held) {
      this.#held.set(id, { release, queue: [] });
      return Promise.resolve();
    }
    return new Promise<void>((resolve, reject) => {
      const waiter: Waiter = {
        release,
        grant: () => {
          settle();
          resolve();
        },
      };
      const leave = (error: unknown) => {
        settle();
        const index = held.queue.indexOf(waiter);
        if (index >= 0) held.queue.splice(index, 1);
        reject(error);
      };
      const onAbort = () => leave(ERRORS.ABORTED);
      const timer = setTimeout(() => leave(ERRORS.ERR_LOCK_TIMEOUT), this.#timeoutMs);
      timer.unref();
      const settle = () => {
        clearTimeout(timer);
        signal.removeEventListener('abort', onAbort);
      };
      signal.addEventListener('abort', onAbort, { once: true });
      held.queue.push(waiter);
      // Ask the holder to let go; a failure there is the holder's, not this request's.
      Promise.resolve()
        .then(() => held.release())
        .catch(() => undefined);
    });
  }

  /** The lock passes to the first waiter, or is free. */
  #handOn(id: string): void {
    const held = this.#held.get(id);
    if (!held) return;
    const next = held.queue.shift();
    if (!next) {
      this.#held.delete(id);
      return;
    }
    held.release = next.release;
    next.grant();
  }
}
