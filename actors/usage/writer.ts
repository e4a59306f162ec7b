import type { Pool } from "../../shared/platform/db/pool.js";
import { applyUsageMessages, type UsageMessage } from "./handler.js";

/**
 * Gathers the usage messages the actor holds and applies them together: each message's
 * handler call joins the next transaction and resolves when it commits. While one
 * transaction runs, the messages that arrive meanwhile wait and leave together in the
 * next, so under load a transaction carries everything one read delivered (one
 * transaction per read instead of one per message: on a small machine PostgreSQL's and
 * the actor's CPU per verify fell several-fold, docs/verify.md). A message waits at most
 * `gatherMs` for others to join it: accounting lags by that much, and a busy stream's
 * messages of that span share one transaction. The messages of one read arrive in one turn,
 * so 0 (the next timer phase) already gathers a read (the usage actor's pause before each
 * read does the gathering, index.ts). A transaction is mostly one statement (handler.ts).
 *
 * If a transaction of several messages fails, each is applied again on its own, so one
 * message PostgreSQL refuses fails (and is retried, then dead-lettered) alone.
 */

interface Waiting {
  message: UsageMessage;
  resolve: () => void;
  reject: (error: unknown) => void;
}

export interface UsageWriter {
  apply(db: Pool, message: UsageMessage): Promise<void>;
}

export function createUsageWriter(options: { gatherMs?: number; maxMessages?: number } = {}): UsageWriter {
  const gatherMs = options.gatherMs ?? 20;
  const maxMessages = options.maxMessages ?? 1_000;
  const waiting = new Map<Pool, Waiting[]>();
  const running = new Set<Pool>();
  let scheduled = false;

  async function write(db: Pool, group: Waiting[]): Promise<void> {
    try {
      await applyUsageMessages(
        db,
        group.map((w) => w.message),
      );
      for (const w of group) w.resolve();
    } catch (error) {
      if (group.length === 1) return group[0].reject(error);
      for (const w of group) {
        await applyUsageMessages(db, [w.message]).then(() => w.resolve(), w.reject);
      }
    }
  }

  function flush(db: Pool): void {
    const queue = waiting.get(db);
    if (running.has(db) || !queue || queue.length === 0) return;
    const group = queue.splice(0, maxMessages);
    running.add(db);
    void write(db, group).finally(() => {
      running.delete(db);
      if (queue.length > 0) schedule();
    });
  }

  /** One transaction per database at a time; the next leaves `gatherMs` after it is asked for. */
  function schedule(): void {
    if (scheduled) return;
    scheduled = true;
    setTimeout(() => {
      scheduled = false;
      for (const pool of waiting.keys()) flush(pool);
    }, gatherMs);
  }

  return {
    apply(db, message) {
      return new Promise<void>((resolve, reject) => {
        const queue = waiting.get(db);
        if (queue) queue.push({ message, resolve, reject });
        else waiting.set(db, [{ message, resolve, reject }]);
        schedule();
      });
    },
  };
}
