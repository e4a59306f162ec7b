import { terminalSafe } from "./format.js";

/** Where the command line writes, and how it is told to stop (Ctrl-C ends `streams --watch`). */
export interface CliIo {
  stdout: { write(text: string): unknown; isTTY?: boolean };
  stderr: { write(text: string): unknown };
  signal?: AbortSignal;
}

export type Env = Readonly<Record<string, string | undefined>>;

/** Exit codes: 0 done, 1 the service refused or could not be reached, 2 the command line was wrong. */
export const EXIT = { ok: 0, failed: 1, usage: 2 } as const;

/** A mistake in the command line: printed with the usage hint, exit code 2. */
export class UsageError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "UsageError";
  }
}

/** A failure worth one line to the operator (no stack): exit code 1. */
export class CliFailure extends Error {
  constructor(
    message: string,
    readonly body?: unknown,
  ) {
    super(message);
    this.name = "CliFailure";
  }
}

/** Lines for the operator: each line made terminal-safe (format.ts), the line breaks kept. */
export function print(io: CliIo, text = ""): void {
  io.stdout.write(`${safeLines(text)}\n`);
}

/** An error line on stderr, made safe the same way. */
export function printError(io: CliIo, text: string): void {
  io.stderr.write(`${safeLines(text)}\n`);
}

const safeLines = (text: string) => text.split("\n").map(terminalSafe).join("\n");

/**
 * JSON.stringify escapes C0 (ESC included) but writes DEL, C1, the bidirectional controls
 * and the line separators as they are: those are escaped too, so a `--json` line is as safe
 * on a terminal as the human output, and still parses to the same values.
 */
const JSON_UNSAFE = /[\u007f-\u009f\u061c\u200e\u200f\u202a-\u202e\u2028\u2029\u2066-\u2069]/g;

export function printJson(io: CliIo, value: unknown): void {
  const line = JSON.stringify(value).replace(JSON_UNSAFE, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, "0")}`);
  io.stdout.write(`${line}\n`);
}
