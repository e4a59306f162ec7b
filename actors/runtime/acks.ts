import type { Redis } from "../../shared/platform/redis/client.js";

/**
 * XACKs of one event-loop turn leave as one command per stream: a batch of messages handled
 * together (the usage writer commits a read's messages in one transaction and resolves them
 * in one turn) costs one round trip instead of one per message. Each caller's promise
 * settles with that command: the ack is durable when it resolves, as with a lone XACK.
 */
export type Ack = (stream: string, id: string) => Promise<void>;

interface Batch {
  ids: string[];
  settle: { resolve: () => void; reject: (error: unknown) => void }[];
}

export function createAcker(redis: Redis, group: string): Ack {
  let batches = new Map<string, Batch>();
  let scheduled = false;

  const flush = () => {
    scheduled = false;
    const sending = batches;
    batches = new Map();
    for (const [stream, batch] of sending) {
      redis.xack(stream, group, ...batch.ids).then(
        () => {
          for (const s of batch.settle) s.resolve();
        },
        (error: unknown) => {
          for (const s of batch.settle) s.reject(error);
        },
      );
    }
  };

  return (stream, id) =>
    new Promise<void>((resolve, reject) => {
      let batch = batches.get(stream);
      if (!batch) batches.set(stream, (batch = { ids: [], settle: [] }));
      batch.ids.push(id);
      batch.settle.push({ resolve, reject });
      if (!scheduled) {
        scheduled = true;
        setImmediate(flush);
      }
    });
}
