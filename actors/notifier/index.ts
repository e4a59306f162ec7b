import { readFileSync } from "node:fs";
import type { Context } from "../../shared/platform/context.js";
import type { Pool } from "../../shared/platform/db/pool.js";
import { outboundPolicyOf } from "../../shared/platform/net/address-policy.js";
import { startActor, type RunningActor } from "../index.js";
import { defineActor } from "../runtime/index.js";
import { DELIVERY_POLICY, startDeliveryLoop, type DeliveryPolicy } from "./deliveries.js";
import { notifierHandler } from "./handler.js";
import { createMailer, type Mailer } from "../../shared/platform/mail.js";
import { eventMessageSchema, EVENTS_STREAM, type EventMessage } from "../../shared/events/index.js";

/**
 * The notifier's consumer group on the events stream. Starts at the stream's beginning
 * ("0") when the group is first made: an event the relay published before the group
 * existed is still told.
 */
export const notifierActor = (mailer: Mailer, kickDeliveries: () => void) =>
  defineActor<EventMessage, Pool>({
    name: "notifier",
    streams: EVENTS_STREAM,
    schema: eventMessageSchema,
    handler: notifierHandler(mailer, kickDeliveries),
    concurrency: 8,
    maxAttempts: 8,
    backoffBaseMs: 2_000,
    backoffMaxMs: 300_000,
    startId: "0",
  });

export interface NotifierOptions {
  mailer?: Mailer;
  policy?: DeliveryPolicy;
}

/** The notifier: the consumer (e-mail, recording deliveries) and the webhook delivery loop, in one process. */
export async function startNotifier(ctx: Context, options: NotifierOptions = {}): Promise<RunningActor> {
  const mailer = options.mailer ?? createMailer(ctx.config.smtpUrl, ctx.logger);
  const loop = startDeliveryLoop(
    { db: ctx.db, clock: ctx.clock, logger: ctx.logger, masterSecret: ctx.masterSecret },
    {
      outbound: outboundPolicyOf("webhook", ctx.config),
      resolver: ctx.config.dnsResolver,
      caPem: ctx.config.scanCaFile ? readFileSync(ctx.config.scanCaFile, "utf8") : null,
    },
    options.policy ?? DELIVERY_POLICY,
  );
  const actor = await startActor(ctx, notifierActor(mailer, loop.kick));
  return {
    async stop() {
      await actor.stop();
      await loop.stop();
      mailer.close();
    },
  };
}
