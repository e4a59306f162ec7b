/**
 * Groups single messages into batches for one destination. The runtime hands the
 * delivery handler one message at a time (with as many in hand as the actor's
 * concurrency allows); each call adds its item and waits for the batch it lands in. A
 * batch goes when it holds `size` items or `lingerMs` after its first item arrived,
 * whichever comes first, and every waiter gets that batch's outcome: all acked together,
 * or all retried together (the runtime's backoff, then they meet again in a new batch).
 */
export interface BatcherOptions<T> {
  size: number;
  lingerMs: number;
  send(items: T[]): Promise<void>;
}

export interface Batcher<T> {
  submit(item: T): Promise<void>;
}

interface Waiting<T> {
  item: T;
  resolve(): void;
  reject(error: unknown): void;
}

export function createBatcher<T>(options: BatcherOptions<T>): Batcher<T> {
  let open: Waiting<T>[] = [];
  let timer: NodeJS.Timeout | null = null;

  const flush = () => {
    if (timer !== null) clearTimeout(timer);
    timer = null;
    const batch = open;
    open = [];
    if (batch.length === 0) return;
    options.send(batch.map((w) => w.item)).then(
      () => {
        for (const w of batch) w.resolve();
      },
      (error: unknown) => {
        for (const w of batch) w.reject(error);
      },
    );
  };

  return {
    submit(item) {
      return new Promise<void>((resolve, reject) => {
        open.push({ item, resolve, reject });
        if (open.length >= options.size) flush();
        else if (timer === null) timer = setTimeout(flush, options.lingerMs);
      });
    },
  };
}
