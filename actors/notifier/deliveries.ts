import type { Clock } from "../../shared/platform/clock.js";
import { unseal } from "../../shared/platform/crypto/seal.js";
import type { Pool } from "../../shared/platform/db/pool.js";
import { claimDeliveries, recordAttempt, webhookSecretAad, type AttemptOutcome, type DeliveryJob } from "../../shared/events/index.js";
import type { Logger } from "../../shared/platform/log.js";
import { coalesce } from "../runtime/coalesce.js";
import { every } from "../runtime/every.js";
import { postJson, type PostOptions, type PostResult } from "./post.js";
import { webhookHeaders } from "./sign.js";

export interface DeliveryPolicy {
  perWebhook: number;
  maxInFlight: number;
  timeoutMs: number;
  backoffBaseMs: number;
  backoffMaxMs: number;
  retryPeriodMs: number;
  pollMs: number;
}

/** The retry policy and limits of webhook deliveries (docs/findings.md). */
export const DELIVERY_POLICY: Readonly<DeliveryPolicy> = {
  /** Requests in flight to one webhook: a slow receiver holds at most this many slots. */
  perWebhook: 2,
  /** Requests in flight in one process, all webhooks together. */
  maxInFlight: 64,
  timeoutMs: 10_000,
  /** Wait before attempt n+1 is min(backoffMaxMs, backoffBaseMs * 2^(n-1)). */
  backoffBaseMs: 30_000,
  backoffMaxMs: 3_600_000,
  /** A delivery not accepted this long after its event is given up (status failed). */
  retryPeriodMs: 24 * 3_600_000,
  /** How often the loop looks for due deliveries on its own (it is also kicked by new ones). */
  pollMs: 1_000,
};

/** What `last_error` says of an attempt that failed before its request (the detail is in the log, not shown to the organization). */
export const PREPARE_FAILED = "internal error: the delivery could not be prepared";

/** 5xx, 408, 429 and no answer at all are worth retrying; any other answer is the receiver's final word. */
export function outcomeOf(
  result: PostResult,
  job: Pick<DeliveryJob, "attempts" | "created_at">,
  nowMs: number,
  policy: Pick<DeliveryPolicy, "backoffBaseMs" | "backoffMaxMs" | "retryPeriodMs">,
): AttemptOutcome {
  if ("status" in result && result.status >= 200 && result.status < 300) return { kind: "delivered", status: result.status };
  const status = "status" in result ? result.status : null;
  const error = "status" in result ? `HTTP ${result.status}` : result.error;
  const retryable = "status" in result ? result.status >= 500 || result.status === 408 || result.status === 429 : !result.refused;
  if (!retryable) return { kind: "failed", status, error };
  const nextAttemptMs = nowMs + Math.min(policy.backoffMaxMs, policy.backoffBaseMs * 2 ** Math.max(0, job.attempts - 1));
  if (nextAttemptMs > job.created_at.getTime() + policy.retryPeriodMs)
    return { kind: "failed", status, error: `${error}; gave up after ${job.attempts} attempts` };
  return { kind: "retry", status, error, nextAttemptMs };
}

export interface DeliveryLoop {
  /** Look for due deliveries now (a new event was enqueued, a slot freed). */
  kick(): void;
  stop(): Promise<void>;
}

export interface DeliveryDeps {
  db: Pool;
  clock: Clock;
  logger: Logger;
  masterSecret: Buffer;
}

/**
 * Works the webhook_deliveries table: claims due rows (leased, so loops in several
 * processes share the work), posts them without waiting for one another, records each
 * outcome. A webhook at its concurrency is skipped by the claim, so a slow or dead
 * receiver never holds up another webhook, another organization or any e-mail.
 */
export function startDeliveryLoop(
  deps: DeliveryDeps,
  post: Omit<PostOptions, "timeoutMs">,
  policy: DeliveryPolicy = DELIVERY_POLICY,
): DeliveryLoop {
  const inFlight = new Map<number, number>();
  const sending = new Set<Promise<void>>();
  let total = 0;
  let stopped = false;

  const attempt = async (job: DeliveryJob): Promise<PostResult> => {
    try {
      const secret = unseal(deps.masterSecret, job.secret_sealed, webhookSecretAad(job.org_id, job.webhook_id));
      const eventType = (JSON.parse(job.body) as { event?: { type?: string } }).event?.type ?? "";
      const headers = webhookHeaders({ secret, timestampS: deps.clock.nowSeconds(), body: job.body, deliveryId: job.id, eventType });
      return await postJson(job.url, job.body, headers, { ...post, timeoutMs: policy.timeoutMs });
    } catch (error) {
      // A delivery that cannot even be sent (its secret does not unseal, its body does not parse)
      // is an attempt that failed: recorded as one, so the retry period ends it like any other.
      // Unrecorded, its lease would run out and it would be claimed again, every 25 s, forever.
      deps.logger.warn({ err: error, delivery: job.id }, "webhook delivery could not be sent");
      return { error: PREPARE_FAILED, refused: false };
    }
  };

  const send = async (job: DeliveryJob) => {
    const result = await attempt(job);
    if ("logDetail" in result)
      deps.logger.warn({ delivery: job.id, error: result.error, detail: result.logDetail }, "webhook delivery refused");
    const now = deps.clock.now();
    await recordAttempt(deps.db, job.id, outcomeOf(result, job, now, policy), now);
  };

  const start = (job: DeliveryJob) => {
    inFlight.set(job.webhook_id, (inFlight.get(job.webhook_id) ?? 0) + 1);
    total++;
    const task = send(job)
      .catch((error: unknown) =>
        deps.logger.warn({ err: error, delivery: job.id }, "webhook delivery failed to run; its lease runs out and it is retried"),
      )
      .finally(() => {
        const left = (inFlight.get(job.webhook_id) ?? 1) - 1;
        if (left <= 0) inFlight.delete(job.webhook_id);
        else inFlight.set(job.webhook_id, left);
        total--;
        sending.delete(task);
        if (!stopped) kick();
      });
    sending.add(task);
  };

  const tick = async () => {
    while (!stopped && total < policy.maxInFlight) {
      const busy = [...inFlight].filter(([, n]) => n >= policy.perWebhook).map(([id]) => id);
      const now = deps.clock.now();
      const jobs = await claimDeliveries(deps.db, now, now + 2 * policy.timeoutMs + 5_000, busy, policy.maxInFlight - total);
      if (jobs.length === 0) return;
      for (const job of jobs) start(job);
    }
  };

  const loop = coalesce(tick, () => stopped);
  const run = loop.run;

  function kick() {
    run().catch((error: unknown) => deps.logger.warn({ err: error }, "webhook delivery loop failed; retrying"));
  }

  const timer = every(deps.clock, policy.pollMs, run, {
    onError: (error) => deps.logger.warn({ err: error }, "webhook delivery loop failed; retrying"),
  });
  return {
    kick,
    async stop() {
      stopped = true;
      await timer.stop();
      await loop.current()?.catch(() => {});
      await Promise.all([...sending]);
    },
  };
}
