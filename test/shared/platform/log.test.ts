import { spawn } from "node:child_process";
import { resolve } from "node:path";
import { describe, expect, it } from "vitest";

/**
 * A process whose stdout reader is gone (its supervisor killed, the pipe closed) still exits:
 * pino's buffered stdout made the exit's flush retry the broken pipe forever.
 */
describe("the process logger", () => {
  it("lets a process exit after its stdout pipe broke", async () => {
    const log = resolve("dist/shared/platform/log.js");
    const script = `
      const { createLogger } = await import(${JSON.stringify(log)});
      const logger = createLogger("info", "test");
      logger.info("first");
      setTimeout(() => {
        for (let i = 0; i < 50; i++) logger.info({ i }, "actor stopped");
        process.exit(0);
      }, 500);
    `;
    const child = spawn(process.execPath, ["--input-type=module", "-e", script], { stdio: ["ignore", "pipe", "ignore"] });
    // The reader goes away after the first line, as a killed supervisor's pipe does.
    child.stdout.once("data", () => child.stdout.destroy());
    const exited = await new Promise<number | string | null>((done) => {
      const timer = setTimeout(() => {
        child.kill("SIGKILL");
        done("hung");
      }, 10_000);
      child.once("exit", (code) => {
        clearTimeout(timer);
        done(code);
      });
    });
    expect(exited).toBe(0);
  }, 15_000);
});
