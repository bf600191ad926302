/** A promise-chain mutex: `run` calls happen one after another, in order. */
export class Mutex {
  private tail: Promise<unknown> = Promise.resolve();
  private holders = 0;

  /** Whether a `run` is under way or waiting. */
  get locked(): boolean {
    return this.holders > 0;
  }

  run<T>(work: () => Promise<T> | T): Promise<T> {
    this.holders++;
    const result = this.tail.then(work, work).finally(() => this.holders--);
    this.tail = result.catch(() => {});
    return result;
  }
}
