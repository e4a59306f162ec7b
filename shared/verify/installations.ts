/**
 * Installation and endpoint-label rules of the counting script
 * (shared/platform/redis/lua/verify-batch-n.lua; docs/security.md, "Public-key abuse and lockouts").
 *
 * - A verify call without `install` is the installation UNNAMED_INSTALL, judged like any
 *   other: the first installation a key is seen on, named or not, is approved and keeps
 *   working; a later unknown one is pending until the owner decides. So a site that never
 *   names installations owns "(unnamed)" from its first call, and a stranger's `install`
 *   is only ever pending; and once a key has named installations, a blocked one cannot
 *   get through by no longer naming itself.
 * - Each new installation recorded pending adds a Redis entry and a PostgreSQL row: capped
 *   per key per UTC day. The cap only stops recording new names: known installations
 *   answer as before, and one the owner approved (seen or not) always works.
 * - Endpoint labels never refuse a call. A caller-chosen label is recorded only by a call
 *   answered `ok`, at most ENDPOINT_LABELS_PER_DAY per key per day; any other call's
 *   unrecorded label is reported as OTHER_LABEL. The endpoints' own labels are not capped.
 */

/** The id of "no `install` sent"; outside what a caller usually names, shown and approved like any id. */
export const UNNAMED_INSTALL = "(unnamed)";

/** New installations recorded pending per key per UTC day; a further new one → installation_limit_reached, not recorded. */
export const PENDING_INSTALLS_PER_DAY = 20;

/** Distinct caller-chosen endpoint labels recorded per key per UTC day; further ones are reported as OTHER_LABEL. */
export const ENDPOINT_LABELS_PER_DAY = 50;

/** The usage label of calls whose caller-chosen label was not recorded. */
export const OTHER_LABEL = "(other)";

/** The endpoints' own usage labels (verify's default among them): a fixed set, never capped. */
export const ROUTE_LABEL_LIST = ["verify", "content", "secret", "botcheck", "scan", "events", "assignments", "activity"] as const;

export type RouteLabel = (typeof ROUTE_LABEL_LIST)[number];

export const ROUTE_LABELS: ReadonlySet<string> = new Set<string>(ROUTE_LABEL_LIST);
