import type { AnswerBase } from "./admin-client.js";
import type { AdminContext } from "./admin-commands.js";
import type { Paged } from "./answers.js";
import { stringOption } from "./args.js";
import { table, text } from "./format.js";
import { EXIT, print } from "./io.js";

/**
 * The paged lists of the admin API (docs/accounts.md "Lists"): `--limit` and `--page` go to
 * the query as given (the server refuses a malformed one, `bad_limit` / `bad_page`), and a
 * page that is not the last says where the next one is.
 */

export const PAGING = { limit: "string", page: "string" } as const;

function pagingQuery(c: AdminContext, extra: Record<string, string | undefined>): string {
  const query = new URLSearchParams();
  for (const [name, value] of Object.entries({ limit: stringOption(c.parsed, "limit"), page: stringOption(c.parsed, "page"), ...extra })) {
    if (value !== undefined) query.set(name, value);
  }
  const text = query.toString();
  return text === "" ? "" : `?${text}`;
}

export async function listCall<T extends object>(
  c: AdminContext,
  path: string,
  extra: Record<string, string | undefined> = {},
): Promise<AnswerBase & Paged & T> {
  const { body } = await c.client.call<Paged & T>("GET", `${path}${pagingQuery(c, extra)}`);
  return body;
}

/** Where the rest is, when the page is not the last. */
export function printMore(c: AdminContext, answer: Paged): void {
  if (answer.has_more === true) {
    print(c.io, `(page ${text(answer.page)}, ${text(answer.total)} in all; next: --page ${Number(answer.page) + 1})`);
  }
}

/** The table, or `empty`, then where the rest is when the page is not the last. */
export function printPage(c: AdminContext, answer: Paged, rows: string[][], headers: string[], empty: string): number {
  if (rows.length === 0) print(c.io, empty);
  else print(c.io, table(headers, rows));
  printMore(c, answer);
  return EXIT.ok;
}
