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

export function print(io: CliIo, text = ""): void {
  io.stdout.write(`${text}\n`);
}

export function printJson(io: CliIo, value: unknown): void {
  io.stdout.write(`${JSON.stringify(value)}\n`);
}
