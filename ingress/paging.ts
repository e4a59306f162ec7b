/**
 * Paging of every list (activity.php, the admin lists of operator-api.md section 5):
 * `limit` 1 to 500 (default 100), `page` 1-based, answered with `total`, `page` and
 * `has_more`. A malformed value is refused `bad_limit` / `bad_page`, never clamped.
 */
export const PAGE_DEFAULT_LIMIT = 100;
export const PAGE_MAX_LIMIT = 500;
/** Pages beyond this are refused (bad_page): OFFSET past millions of rows is a scan, not a page. */
export const PAGE_MAX = 100_000;

export interface Paging {
  limit: number;
  page: number;
  offset: number;
}

function wholeNumber(raw: string | undefined, min: number, max: number, fallback: number): number | null {
  if (raw === undefined || raw === "") return fallback;
  if (!/^\d{1,7}$/.test(raw)) return null;
  const value = Number(raw);
  return value >= min && value <= max ? value : null;
}

export function readPaging(limitRaw: string | undefined, pageRaw: string | undefined): Paging | { refused: "bad_limit" | "bad_page" } {
  const limit = wholeNumber(limitRaw, 1, PAGE_MAX_LIMIT, PAGE_DEFAULT_LIMIT);
  if (limit === null) return { refused: "bad_limit" };
  const page = wholeNumber(pageRaw, 1, PAGE_MAX, 1);
  if (page === null) return { refused: "bad_page" };
  return { limit, page, offset: (page - 1) * limit };
}

/** The paging fields of an answer. */
export function pageFields(paging: Paging, total: number): { total: number; page: number; limit: number; has_more: boolean } {
  return { total, page: paging.page, limit: paging.limit, has_more: paging.page * paging.limit < total };
}

/** Paging from a query string (the admin lists). */
export function queryPaging(query: string): Paging | { refused: "bad_limit" | "bad_page" } {
  const params = new URLSearchParams(query);
  return readPaging(params.get("limit") ?? undefined, params.get("page") ?? undefined);
}
