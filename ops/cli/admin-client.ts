import { CliFailure } from "./io.js";

/**
 * The admin API over HTTP (operator-api.md section 2), as the dashboard and the tests
 * use it. A refusal (`ok:false`) becomes a CliFailure carrying the answer's body.
 */
/** What every answer carries: `ok`, and on a refusal its reason and detail. */
export interface AnswerBase {
  ok: boolean;
  reason?: string;
  detail?: string;
}

export interface AdminAnswer<T extends object = object> {
  status: number;
  body: AnswerBase & T;
}

export interface AdminClient {
  readonly baseUrl: string;
  /**
   * One call; `T` is the answer the caller reads (answers.ts). The admin API and the CLI
   * ship together, so the answer is taken as `T` once it is JSON with a boolean `ok`.
   */
  call<T extends object = object>(method: string, path: string, body?: unknown): Promise<AdminAnswer<T>>;
}

const TIMEOUT_MS = 30_000;

export function adminClient(siteUrl: string, token: string, signal?: AbortSignal): AdminClient {
  const baseUrl = `${siteUrl.replace(/\/+$/, "")}/admin/v1`;
  return {
    baseUrl,
    async call<T extends object>(method: string, path: string, body?: unknown): Promise<AdminAnswer<T>> {
      const timeout = AbortSignal.timeout(TIMEOUT_MS);
      let response: Response;
      try {
        response = await fetch(`${baseUrl}${path}`, {
          method,
          headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
          body: method === "GET" ? undefined : JSON.stringify(body ?? {}),
          signal: signal ? AbortSignal.any([signal, timeout]) : timeout,
        });
      } catch (error) {
        const cause = (error as { cause?: { code?: string; message?: string } }).cause;
        const why = cause?.code ?? cause?.message ?? (error as Error).message;
        throw new CliFailure(`cannot reach the admin API at ${baseUrl}: ${why}`);
      }
      const text = await response.text();
      let parsed: unknown;
      try {
        parsed = JSON.parse(text);
      } catch {
        throw new CliFailure(`the admin API answered HTTP ${response.status} without JSON: ${text.slice(0, 200)}`);
      }
      if (parsed === null || typeof parsed !== "object" || typeof (parsed as { ok?: unknown }).ok !== "boolean") {
        throw new CliFailure(`the admin API answered HTTP ${response.status} with an unexpected body`);
      }
      const answer: AdminAnswer<T> = { status: response.status, body: parsed as AdminAnswer<T>["body"] };
      if (!answer.body.ok) {
        const detail = answer.body.detail ? `: ${answer.body.detail}` : "";
        throw new CliFailure(`${answer.body.reason ?? "refused"} (HTTP ${answer.status})${detail}`, answer.body);
      }
      return answer;
    },
  };
}

/** A path segment, percent-encoded (domains and installation names travel in paths). */
export const segment = (value: string | number) => encodeURIComponent(String(value));
