import { getPriority, setPriority } from "node:os";

/**
 * Actors work behind the requests: what they write can wait milliseconds, a verify answer
 * cannot. On cores they share with the ingress (and Redis), an actor that wakes with a
 * batch (the usage actor every 200 ms) took the core from the ingress mid-request and
 * showed up in verify's p99. So actors run at a lower CPU priority (a higher nice value,
 * ACTOR_NICE, 10 by default): the kernel gives the ingress the core when both want it, and
 * the actor the time the ingress leaves. On idle or dedicated cores nothing changes.
 *
 * The prober keeps the ingress's priority: it times the service's answers for the status
 * page, and a delayed prober would report a busy machine as a slow service.
 */
export const TIMING_ACTORS: ReadonlySet<string> = new Set(["prober"]);

/**
 * Lowers this process's CPU priority to `nice` for actor `name` (never raises it: a process
 * started nicer stays so). Linux sets it for the calling thread, the main one, and the
 * threads started after it (libuv's pool) inherit it: call it first thing, before the
 * process has a logger. Returns what kept it from lowering the priority, for the caller to
 * log, or null.
 */
export function lowerActorPriority(name: string, nice: number): unknown {
  if (nice === 0 || TIMING_ACTORS.has(name)) return null;
  try {
    if (getPriority() < nice) setPriority(nice);
    return null;
  } catch (error) {
    return error;
  }
}
