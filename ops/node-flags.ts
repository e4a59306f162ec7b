/**
 * V8 flags for the ingress process. verify allocates a few short-lived objects per call;
 * with the default 16 MiB young generation, scavenges took about 18% of the ingress's
 * CPU under load. A 64 MiB semi-space makes them rarer (verify's per-call CPU measured
 * 15.5 µs -> 13.5 µs). The supervisor starts the ingress with these; run it alone as
 * `node --max-semi-space-size=64 dist/ops/start.js ingress` (npm run start:ingress does).
 */
export const INGRESS_NODE_FLAGS: readonly string[] = ["--max-semi-space-size=64"];
