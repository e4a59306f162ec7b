import type { SiemKind, SiemTarget } from "../../shared/events/index.js";

/**
 * The pusher's own state. Its stream messages (the destination streams, the test request)
 * are contracts with the admin API and live in shared/events/siem-stream.ts.
 */

/** A destination as the pusher holds it: the target parsed, the token unsealed. */
export interface LoadedDestination {
  id: number;
  orgId: number;
  kind: SiemKind;
  url: string;
  target: SiemTarget;
  token: string | null;
  index: string | null;
}
