import { execFile, execFileSync } from "node:child_process";
import { promisify } from "node:util";
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestGateway, type TestGateway } from "../../helpers/gateway.js";
import { clientSetup, type MadeKey } from "../../ingress/routes/verify-fixtures.js";

/**
 * The verify client as a package of its own (shared/client/package.json): nothing outside
 * its folder, `npm pack` builds and packs it, and the tarball installed into an empty
 * project (offline: it has no dependencies) verifies against a live gateway in Node.
 */

const CLIENT_DIR = fileURLToPath(new URL("../../../shared/client/", import.meta.url));
const work = mkdtempSync(join(tmpdir(), "gw-client-pkg-"));
let gw: TestGateway;
let made: MadeKey;

beforeAll(async () => {
  gw = await startTestGateway("client-package");
  made = await clientSetup(gw);
});
afterAll(async () => {
  await gw?.stop();
  rmSync(work, { recursive: true, force: true });
});

const npm = (args: string[], cwd: string) =>
  execFileSync("npm", [...args, "--no-audit", "--no-fund", "--loglevel=error"], {
    cwd,
    encoding: "utf8",
    env: { ...process.env, npm_config_offline: "true" },
  });

describe("the verify client package", () => {
  it("imports nothing outside its folder (no server code, no Node built-ins)", () => {
    const sources = readdirSync(CLIENT_DIR).filter((f) => f.endsWith(".ts"));
    expect(sources.length).toBeGreaterThan(3);
    for (const file of sources) {
      const text = readFileSync(join(CLIENT_DIR, file), "utf8");
      const specifiers = [...text.matchAll(/(?:import|export)[^"';]*?from\s+["']([^"']+)["']|import\(\s*["']([^"']+)["']\s*\)/g)].map(
        (m) => m[1] ?? m[2],
      );
      for (const specifier of specifiers) expect([file, specifier]).toEqual([file, expect.stringMatching(/^\.\/[\w.-]+\.js$/)]);
    }
    const manifest = JSON.parse(readFileSync(join(CLIENT_DIR, "package.json"), "utf8"));
    expect(manifest).toMatchObject({
      name: "@gateway/verify-client",
      type: "module",
      exports: { ".": { types: "./dist/index.d.ts", import: "./dist/index.js" } },
    });
    expect(manifest.dependencies).toBeUndefined();
  });

  it("npm pack builds a tarball that installs offline into an empty project and verifies against a live gateway", async () => {
    const packed = JSON.parse(npm(["pack", "--json", "--pack-destination", work], CLIENT_DIR)) as {
      filename: string;
      files: { path: string }[];
    }[];
    const files = packed[0].files.map((f) => f.path).sort();
    expect(files).toEqual(expect.arrayContaining(["package.json", "dist/index.js", "dist/index.d.ts", "dist/client.js"]));
    expect(files.filter((f) => f.endsWith(".ts") && !f.endsWith(".d.ts"))).toEqual([]);

    const project = join(work, "app");
    execFileSync("mkdir", ["-p", project]);
    writeFileSync(join(project, "package.json"), JSON.stringify({ name: "app", private: true, type: "module" }));
    npm(["install", join(work, packed[0].filename)], project);
    writeFileSync(
      join(project, "main.js"),
      `import { createVerifyClient, CLIENT_VERSION } from "@gateway/verify-client";
const client = createVerifyClient({ baseUrl: process.env.BASE, key: process.env.KEY, install: "packaged" });
const result = await client.verify({ domain: "example.com" });
console.log(JSON.stringify({ version: CLIENT_VERSION, authorized: result.authorized, source: result.source, reason: result.reason ?? null, fault: result.fault ?? null }));
`,
    );
    // Asynchronously: the gateway answers from this process's event loop.
    const { stdout: out } = await promisify(execFile)(process.execPath, ["main.js"], {
      cwd: project,
      encoding: "utf8",
      env: { ...process.env, BASE: `${gw.url}/api/v1`, KEY: made.key },
    });
    expect(JSON.parse(out), out).toMatchObject({ version: manifestVersion(), authorized: true, source: "service" });
  });
});

function manifestVersion(): string {
  return (JSON.parse(readFileSync(join(CLIENT_DIR, "package.json"), "utf8")) as { version: string }).version;
}
