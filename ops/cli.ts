#!/usr/bin/env node
import { realpathSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { terminalSafe } from "./cli/format.js";
import { runCli } from "./cli/run.js";

/**
 * `npx gateway <noun> <verb> ...` (package.json `bin`). The only place the command line
 * reads process.env and process.argv; everything else is ops/cli/run.ts's runCli, which
 * the tests call directly.
 */
export { runCli, usage } from "./cli/run.js";
export type { CliIo } from "./cli/io.js";

function isEntryPoint(): boolean {
  const script = process.argv[1];
  if (!script) return false;
  try {
    // npx runs the bin through a symlink in node_modules/.bin.
    return realpathSync(script) === fileURLToPath(import.meta.url);
  } catch {
    return false;
  }
}

if (isEntryPoint()) {
  const controller = new AbortController();
  for (const signal of ["SIGINT", "SIGTERM"] as const) process.once(signal, () => controller.abort());
  // A reader that stops early (`| head`) closes the pipe: stop quietly as other Unix tools do.
  for (const stream of [process.stdout, process.stderr]) {
    stream.on("error", (error: NodeJS.ErrnoException) => {
      if (error.code !== "EPIPE") throw error;
      controller.abort();
      process.exit(process.exitCode ?? 0);
    });
  }
  runCli(process.argv.slice(2), process.env, { stdout: process.stdout, stderr: process.stderr, signal: controller.signal }).then(
    (code) => {
      process.exitCode = code;
    },
    (error: unknown) => {
      process.stderr.write(`error: ${terminalSafe(error instanceof Error ? error.message : String(error))}\n`);
      process.exitCode = 1;
    },
  );
}
