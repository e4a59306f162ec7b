/**
 * Where the client keeps what must outlive one call: the last entitlement and lifeline
 * per (key, domain, installation), and keys.json. Values are JSON strings. A server that
 * restarts and should still serve while the service is unreachable gives a lasting store
 * (a file, Redis); docs/client.md shows one in a few lines.
 */
export interface CacheStore {
  get(name: string): Promise<string | null> | string | null;
  set(name: string, value: string): Promise<void> | void;
  delete(name: string): Promise<void> | void;
}

export function memoryStore(): CacheStore {
  const values = new Map<string, string>();
  return {
    get: (name) => values.get(name) ?? null,
    set: (name, value) => {
      values.set(name, value);
    },
    delete: (name) => {
      values.delete(name);
    },
  };
}

/** Browsers: `webStorageStore(localStorage)` keeps the cache across page loads. */
export function webStorageStore(
  storage: { getItem(k: string): string | null; setItem(k: string, v: string): void; removeItem(k: string): void },
  prefix = "gateway:",
): CacheStore {
  return {
    get: (name) => storage.getItem(prefix + name),
    set: (name, value) => storage.setItem(prefix + name, value),
    delete: (name) => storage.removeItem(prefix + name),
  };
}
