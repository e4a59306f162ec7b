import { execFile } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestGateway, type TestGateway } from "../helpers/gateway.js";
import { makeKey, makeOrg, verifyDomain } from "../ingress/routes/verify-fixtures.js";

/** The README's quick start, as printed: the curl commands, then the Node and Python checks, against a live gateway. */

const README = readFileSync(new URL("../../README.md", import.meta.url), "utf8");
const section = README.slice(README.indexOf("## Quick start"), README.indexOf("## Running the roles alone"));
const blocks = (lang: string) => [...section.matchAll(new RegExp(`\`\`\`${lang}\\n([\\s\\S]*?)\`\`\``, "g"))].map((m) => m[1]);
const run = promisify(execFile);

let gw: TestGateway;
let key: string;
const dir = mkdtempSync(join(tmpdir(), "gw-quick-start-"));
beforeAll(async () => {
  gw = await startTestGateway("quick-start");
  const org = await makeOrg(gw);
  await verifyDomain(gw, org, "demo.example");
  key = (await makeKey(gw, org, { domain: "demo.example" })).key;
});
afterAll(async () => {
  await gw?.stop();
  rmSync(dir, { recursive: true, force: true });
});

describe("README quick start", () => {
  it("the curl commands get a signed answer whose signature and entitlement the Node and Python snippets accept", async () => {
    const [sh] = blocks("sh");
    const [signature, entitlement] = blocks("js");
    const [python] = blocks("python");
    expect([sh, signature, entitlement, python].every(Boolean)).toBe(true);
    const commands = sh.replace(/^KEY=.*$/m, "").replaceAll("localhost:8080", `127.0.0.1:${gw.ingress.port}`);
    const nonce = "00112233445566778899aabbccddeeff";
    const env = { ...process.env, KEY: key, NONCE: nonce };
    await run("bash", ["-euc", commands.replace(/^NONCE=.*$/m, "")], { cwd: dir, env });
    expect(JSON.parse(readFileSync(join(dir, "answer.json"), "utf8"))).toMatchObject({ authorized: true, nonce });
    for (const snippet of [signature, entitlement]) {
      expect((await run(process.execPath, ["--input-type=module", "-e", snippet], { cwd: dir, env })).stdout.trim()).toBe("true");
    }
    expect((await run("python3", ["-c", python], { cwd: dir, env })).stdout.trim()).toBe("True");
    // A wrong key fails the signature check.
    expect(
      (await run(process.execPath, ["--input-type=module", "-e", signature], { cwd: dir, env: { ...env, KEY: `${key}x` } })).stdout.trim(),
    ).toBe("false");
  });
});
