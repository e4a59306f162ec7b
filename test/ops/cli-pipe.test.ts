import { spawn } from "node:child_process";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";

const CLI = fileURLToPath(new URL("../../dist/ops/cli.js", import.meta.url));

/** Runs the built CLI with its stdout pipe closed by the reader before it writes (`| head`). */
function runWithClosedStdout(args: string[]): Promise<{ code: number | null; err: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [CLI, ...args], { stdio: ["ignore", "pipe", "pipe"] });
    child.stdout.destroy();
    let err = "";
    child.stderr.on("data", (c: Buffer) => {
      err += c.toString("utf8");
    });
    child.on("error", reject);
    child.on("close", (code) => resolve({ code, err }));
  });
}

describe("CLI output into a pipe closed early", () => {
  it("exits quietly, without a write EPIPE stack trace", async () => {
    const { code, err } = await runWithClosedStdout(["help"]);
    expect(err).toBe("");
    expect(code).toBe(0);
  });
});
