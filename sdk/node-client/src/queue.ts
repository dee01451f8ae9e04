/**
 * Queue is the client's side of a bidirectional stream: the messages pushed
 * into it are what the stream sends, in order, until it is closed. A stream
 * that ran out of messages would half-close, which the server reads as a
 * client that will answer nothing more, so the queue stays open until the
 * run's answer has come.
 */
export class Queue<T> implements AsyncIterable<T> {
  #items: T[] = [];
  #waiting: ((r: IteratorResult<T>) => void) | undefined;
  #closed = false;

  /** push sends v, unless the queue is closed; it reports whether it was taken. */
  push(v: T): boolean {
    if (this.#closed) return false;
    const w = this.#waiting;
    if (w) {
      this.#waiting = undefined;
      w({ value: v, done: false });
    } else {
      this.#items.push(v);
    }
    return true;
  }

  /** close ends the stream of messages after those pushed already. */
  close(): void {
    this.#closed = true;
    const w = this.#waiting;
    this.#waiting = undefined;
    w?.({ value: undefined, done: true });
  }

  get closed(): boolean {
    return this.#closed;
  }

  [Symbol.asyncIterator](): AsyncIterator<T> {
    return {
      next: (): Promise<IteratorResult<T>> => {
        if (this.#items.length > 0) return Promise.resolve({ value: this.#items.shift() as T, done: false });
        if (this.#closed) return Promise.resolve({ value: undefined, done: true });
        return new Promise((resolve) => (this.#waiting = resolve));
      },
      return: (): Promise<IteratorResult<T>> => {
        this.close();
        return Promise.resolve({ value: undefined, done: true });
      },
      // The stream failed: nothing more is sent.
      throw: (): Promise<IteratorResult<T>> => {
        this.close();
        return Promise.resolve({ value: undefined, done: true });
      },
    };
  }
}
