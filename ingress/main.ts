import { Registry, collectDefaultMetrics } from "prom-client";
import {
  createEnforcer,
  createSnapshotCache,
  createProjector,
  watchSnapshots,
  reconcileProjections,
  retireKeysWhenDue,
} from "../shared/verify/index.js";
import type { Context } from "../shared/platform/context.js";
import { createAttestations } from "../shared/platform/crypto/attestation.js";
import { createMailer } from "../shared/platform/mail.js";
import { createStatusCache } from "../shared/status/index.js";
import { buildApp, metricsOnly } from "./app.js";
import type { IngressDeps } from "./deps.js";
import { listen } from "./http.js";
import { createIngressMetrics } from "./metrics.js";
import { createBotcheckState } from "./routes/botcheck/state.js";
import { createClientAddressResolver } from "./client-address.js";
import { registerStreamMetrics } from "./stream-metrics.js";

export interface RunningIngress {
  port: number;
  /** The internal metrics listener's port (METRICS_HOST:METRICS_PORT). */
  metricsPort: number;
  deps: IngressDeps;
  stop(): Promise<void>;
}

export async function startIngress(ctx: Context): Promise<RunningIngress> {
  const metrics = new Registry();
  collectDefaultMetrics({ register: metrics });
  const ingressMetrics = createIngressMetrics(metrics);
  const rebuilds = ingressMetrics.rebuilds;
  registerStreamMetrics(metrics, ctx.redis, ctx.keys);
  const projector = createProjector(ctx);
  const snapshots = createSnapshotCache(ctx.redis, ctx.keys);
  await snapshots.subscribe();
  const watcher = watchSnapshots({ ...ctx, projector, onRebuild: () => rebuilds.inc() });
  const reconciler = reconcileProjections({ ...ctx, projector });
  // Keys whose rotation grace ended: the hot path refuses them already; this revokes them for good.
  const retirements = retireKeysWhenDue({ ...ctx, projector });
  let port = ctx.config.port;
  const enforcer = createEnforcer({
    ...ctx,
    snapshots,
    geoipDb: ctx.config.geoipDb,
    rateSourceIpv6Prefix: ctx.config.rateSourceIpv6Prefix,
    metrics: ingressMetrics.enforcer,
  });
  const deps: IngressDeps = {
    ...ctx,
    projector,
    snapshots,
    metrics,
    httpMetrics: ingressMetrics.http,
    enforcer,
    attestations: createAttestations(enforcer.signingKey),
    botcheck: createBotcheckState(ctx.masterSecret, ctx.redis),
    baseUrl: () => `${siteUrl()}/api/v1`,
    status: createStatusCache({
      ...ctx,
      options: () => ({
        siteUrl: siteUrl(),
        pageName: ctx.config.statusPageName,
        probeIntervalS: ctx.config.statusProbeIntervalS,
        slowMs: ctx.config.statusSlowMs,
      }),
    }),
    mailer: createMailer(ctx.config.smtpUrl, ctx.logger),
  };
  // With PORT=0 the site URL default names the port chosen at listen time.
  const siteUrl = () => (ctx.config.siteUrl.endsWith(":0") ? ctx.config.siteUrl.replace(/:0$/, `:${port}`) : ctx.config.siteUrl);
  const server = await listen({
    host: ctx.config.host,
    port,
    dispatch: buildApp(deps),
    logger: ctx.logger,
    clientAddress: createClientAddressResolver({ trustedProxies: ctx.config.trustedProxies, header: ctx.config.trustedProxyHeader }),
  });
  port = server.port;
  // /metrics lives on its own listener, loopback by default (docs/security.md, item 6): the
  // public port never shows request counts, stream names or process internals.
  const metricsServer = await listen({
    host: ctx.config.metricsHost,
    port: ctx.config.metricsPort,
    dispatch: metricsOnly(deps),
    logger: ctx.logger,
  });
  return {
    port,
    metricsPort: metricsServer.port,
    deps,
    async stop() {
      server.close();
      metricsServer.close();
      watcher.stop();
      reconciler.stop();
      retirements.stop();
      snapshots.close();
      deps.mailer.close();
    },
  };
}
