import { pino, type Logger } from "pino";

export type { Logger };

/** One logger per process; children carry the role and, per request, a request id. */
export function createLogger(level: string, role: string): Logger {
  return pino({ level, base: { role }, timestamp: pino.stdTimeFunctions.isoTime });
}

/** A logger that drops everything: for tests that assert on behaviour, not on logs. */
export function silentLogger(): Logger {
  return pino({ level: "silent" });
}
