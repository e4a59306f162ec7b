import { expect } from "vitest";

/**
 * The paging every admin list answers (ingress/paging.ts, docs/accounts.md "Lists"), checked
 * through a `get` that reads `path` with a query string as some principal.
 */
export type ListGet = (path: string, query?: Record<string, string>) => Promise<{ status: number; body: any }>;

/** Limit 1-500 (default 100), page from 1, total and has_more; malformed values refused `bad_limit` / `bad_page`. */
export async function checkPaging(get: ListGet, path: string, field: string): Promise<void> {
  const all = await get(path);
  expect(all.status).toBe(200);
  expect(all.body).toMatchObject({ ok: true, page: 1, limit: 100, has_more: false });
  expect(Array.isArray(all.body[field])).toBe(true);
  expect(all.body.total).toBe(all.body[field].length);
  if (all.body.total >= 2) {
    const first = await get(path, { limit: "1", page: "1" });
    const second = await get(path, { limit: "1", page: "2" });
    expect(first.body[field]).toEqual([all.body[field][0]]);
    expect(second.body[field]).toEqual([all.body[field][1]]);
    expect(first.body).toMatchObject({ total: all.body.total, page: 1, has_more: true });
    const last = await get(path, { limit: "1", page: String(all.body.total) });
    expect(last.body.has_more).toBe(false);
    expect((await get(path, { limit: "1", page: String(all.body.total + 1) })).body[field]).toEqual([]);
  }
  for (const [query, reason] of [
    [{ limit: "0" }, "bad_limit"],
    [{ limit: "501" }, "bad_limit"],
    [{ limit: "ten" }, "bad_limit"],
    [{ limit: "1.5" }, "bad_limit"],
    [{ page: "0" }, "bad_page"],
    [{ page: "-1" }, "bad_page"],
    [{ page: "x" }, "bad_page"],
  ] as const) {
    const res = await get(path, query);
    expect(res.status, JSON.stringify(query)).toBe(400);
    expect(res.body).toEqual({ ok: false, reason, message: expect.any(String) });
  }
  expect((await get(path, { limit: "500" })).status).toBe(200);
}

/** Reads the whole list `limit` entries a page, checking each page's `total`, `page`, `limit` and `has_more`; the entries in order. */
export async function pageThrough(get: ListGet, path: string, field: string, limit: number): Promise<unknown[]> {
  const entries: unknown[] = [];
  let total: number | undefined;
  for (let page = 1; ; page++) {
    const res = await get(path, { limit: String(limit), page: String(page) });
    expect(res.status, `${path} page ${page}`).toBe(200);
    total ??= res.body.total as number;
    expect(res.body, `${path} page ${page}`).toMatchObject({ ok: true, total, page, limit, has_more: page * limit < total });
    expect(res.body[field]).toHaveLength(Math.min(limit, total - (page - 1) * limit));
    entries.push(...res.body[field]);
    if (!res.body.has_more) return entries;
  }
}
