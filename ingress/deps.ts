import type { Redis } from "../shared/platform/redis/client.js";
import type { Registry } from "prom-client";
import type { Clock, SharedTestClock } from "../shared/platform/clock.js";
import type { Config } from "../shared/platform/config.js";
import type { Attestations } from "../shared/platform/crypto/attestation.js";
import type { Enforcer, Projector, SnapshotCache } from "../shared/verify/index.js";
import type { Pool } from "../shared/platform/db/pool.js";
import type { Logger } from "../shared/platform/log.js";
import type { Mailer } from "../shared/platform/mail.js";
import type { Keys } from "../shared/platform/redis/keys.js";
import type { StatusCache } from "../shared/status/index.js";
import type { BotcheckState } from "./routes/botcheck/state.js";
import type { HttpMetrics } from "./metrics.js";

/** Everything a route or admin handler may use, built once at start and passed down. */
export interface IngressDeps {
  config: Config;
  clock: Clock;
  /** Present only with GATEWAY_TEST_CLOCK=1. */
  testClock: SharedTestClock | null;
  logger: Logger;
  redis: Redis;
  keys: Keys;
  db: Pool;
  /** DATABASE_READ_URL's pool (or `db`): the read-only endpoints' reads. */
  readDb: Pool;
  masterSecret: Buffer;
  projector: Projector;
  snapshots: SnapshotCache;
  metrics: Registry;
  /** Request counters and durations of the HTTP layer, registered in `metrics`. */
  httpMetrics: HttpMetrics;
  /** The enforcement engine every gated endpoint goes through (shared/verify/enforcer.ts). */
  enforcer: Enforcer;
  /** The Ed25519 `attestation` of content and secret answers, with the enforcer's signing key. */
  attestations: Attestations;
  /** botcheck.php's compiled signals schema and pass-token secret. */
  botcheck: BotcheckState;
  /** The public base (`SITE_URL/api/v1`), known after listen when PORT=0. */
  baseUrl(): string;
  /** The status document, built at most once a minute across processes (docs/status.md). */
  status: StatusCache;
  /** E-mail through SMTP_URL (logged when unset): member invitations and sign-in links. */
  mailer: Mailer;
}
