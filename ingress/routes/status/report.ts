import { currentQuarter, parseQuarter, reportData, renderReport } from "../../../shared/status/index.js";
import type { IngressDeps } from "../../deps.js";
import { refuseField } from "../../reply.js";
import type { HttpReply, HttpRequest } from "../../types.js";
import { CACHE_CONTROL } from "./reply.js";

/** Rendered reports are kept this long in Redis: a print run of many readers reads PostgreSQL once a minute. */
const REPORT_TTL_S = 60;

/** `GET {site_url}/status/report?quarter=2026-Q4` (default: the current quarter), HTML for print. */
export async function statusReport(request: HttpRequest, deps: IngressDeps): Promise<HttpReply> {
  const raw = new URLSearchParams(request.query).get("quarter");
  const now = deps.clock.now();
  const quarter = raw === null || raw === "" ? currentQuarter(now) : parseQuarter(raw, now);
  if (quarter === null) {
    return {
      ...refuseField("bad_quarter", "quarter must be YYYY-Qn (n 1 to 4), from 2000 up to the current quarter"),
      headers: { "cache-control": "no-store" },
    };
  }
  const key = deps.keys.statusReport(quarter.label);
  let html = await deps.redis.get(key);
  if (html === null) {
    html = renderReport(await reportData(deps.db, quarter, deps.config.statusPageName, now));
    await deps.redis.set(key, html, "EX", REPORT_TTL_S);
  }
  return { status: 200, headers: { "content-type": "text/html; charset=utf-8", "cache-control": CACHE_CONTROL }, body: html };
}
