import { pino, type Logger } from "pino";

export type { Logger };

/**
 * One logger per process; children carry the role and, per request, a request id. Lines are
 * written to stdout as they are logged (sync): with pino's default buffered stdout, a process
 * whose stdout reader is gone (a supervisor killed, its pipe closed) never exits, because the
 * exit's flush retries the broken pipe forever; written at once, a broken pipe only drops lines.
 */
export function createLogger(level: string, role: string): Logger {
  return pino({ level, base: { role }, timestamp: pino.stdTimeFunctions.isoTime }, pino.destination({ dest: 1, sync: true }));
}

/** A logger that drops everything: for tests that assert on behaviour, not on logs. */
export function silentLogger(): Logger {
  return pino({ level: "silent" });
}
