import { findKey, dailyUsageOfKey } from "../../shared/verify/index.js";
import { isIsoDate } from "../../shared/platform/validation.js";
import { ok, refuse, refuseField } from "../reply.js";
import { idParam, type AdminHandler } from "./common.js";

const tally = (): Record<string, number> => Object.create(null) as Record<string, number>;

/** Per-day counts of one key: counted, refused, by reason and by endpoint label. */
export const keyUsage: AdminHandler = async (request, deps, params) => {
  const id = idParam(params, "id");
  const key = id === null ? null : await findKey(deps.db, id);
  if (!key) return refuse("not_found");
  const query = new URLSearchParams(request.query);
  const today = new Date(deps.clock.now()).toISOString().slice(0, 10);
  const from = query.get("from") ?? new Date(deps.clock.now() - 29 * 86400_000).toISOString().slice(0, 10);
  const to = query.get("to") ?? today;
  if (!isIsoDate(from)) return refuseField("bad_from");
  if (!isIsoDate(to)) return refuseField("bad_to");
  const rows = await dailyUsageOfKey(deps.db, key.id, from, to);
  const days = new Map<
    string,
    { day: string; calls: number; counted: number; refused: number; by_reason: Record<string, number>; by_endpoint: Record<string, number> }
  >();
  for (const row of rows) {
    // Endpoint labels are the callers' text: tallies without a prototype, so `constructor` is a label like any other.
    const entry = days.get(row.day) ?? { day: row.day, calls: 0, counted: 0, refused: 0, by_reason: tally(), by_endpoint: tally() };
    entry.calls += row.calls;
    entry.counted += row.counted;
    entry.refused += row.refused;
    entry.by_reason[row.reason] = (entry.by_reason[row.reason] ?? 0) + row.calls;
    entry.by_endpoint[row.endpoint] = (entry.by_endpoint[row.endpoint] ?? 0) + row.calls;
    days.set(row.day, entry);
  }
  return ok({ key_id: key.id, from, to, usage: [...days.values()] });
};
