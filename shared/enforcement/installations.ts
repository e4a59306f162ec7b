/**
 * Installation and endpoint-label rules of the counting script (docs/security.md, item 4).
 *
 * - A verify call without `install` on a key that has installations is the installation
 *   UNNAMED_INSTALL, subject to approval like any other: once a key has installations, a
 *   blocked one cannot get through by no longer naming itself. On a key without
 *   installations a call without `install` passes and nothing is recorded.
 * - Each new installation recorded pending and each distinct endpoint label adds a Redis
 *   entry and a PostgreSQL row: both are capped per key per UTC day.
 */

/** The id of "no `install` sent"; outside what a caller usually names, shown and approved like any id. */
export const UNNAMED_INSTALL = "(unnamed)";

/** New installations recorded pending per key per UTC day; more → installation_limit_reached. */
export const PENDING_INSTALLS_PER_DAY = 20;

/** Distinct endpoint labels per key per UTC day; a further label → endpoint_limit_reached. */
export const ENDPOINT_LABELS_PER_DAY = 50;
