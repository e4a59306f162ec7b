import { execFile, execFileSync } from "node:child_process";
import { promisify } from "node:util";
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { build } from "esbuild";
import puppeteer, { type Browser } from "puppeteer-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestGateway, type TestGateway } from "../../helpers/gateway.js";
import { putContent } from "../../ingress/routes/content-fixtures.js";
import { clientSetup, type MadeKey, makeKey } from "../../ingress/routes/verify-fixtures.js";
import { WAIT } from "../../helpers/browser-wait.js";

/**
 * The verify client as a package of its own (shared/client/package.json): nothing outside
 * its folder, `npm pack` builds and packs it, and the tarball installed into an empty
 * project (offline: it has no dependencies) verifies against a live gateway in Node, and
 * bundled from that project's node_modules (esbuild, for the browser) in headless Chromium.
 */

const CLIENT_DIR = fileURLToPath(new URL("../../../shared/client/", import.meta.url));
const work = mkdtempSync(join(tmpdir(), "gw-client-pkg-"));
let gw: TestGateway;
let made: MadeKey;
let browser: Browser | undefined;
let site: Server | undefined;

beforeAll(async () => {
  gw = await startTestGateway("client-package");
  made = await clientSetup(gw);
});
afterAll(async () => {
  await browser?.close();
  await new Promise<void>((resolve) => (site ? site.close(() => resolve()) : resolve()));
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
    const { files, project } = installed();
    expect(files).toEqual(expect.arrayContaining(["package.json", "dist/index.js", "dist/index.d.ts", "dist/client.js"]));
    expect(files.filter((f) => f.endsWith(".ts") && !f.endsWith(".d.ts"))).toEqual([]);

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

  it("the installed package, bundled by esbuild for the browser, verifies in headless Chromium: signed answer believed, tampered ones refused", async () => {
    const { project } = installed();
    // A key of its own: the Node test's key has its first installation ("packaged") already.
    const own = await makeKey(gw, made.orgId);
    // The page's script: the package as a site would bundle it, from the temporary project's node_modules.
    const bundled = await build({
      stdin: {
        contents: `import { createVerifyClient, CLIENT_VERSION } from "@gateway/verify-client";
globalThis.verifyInBrowser = async ({ base, key, forge }) => {
  // forge: a field of the verify answer rewritten on its way to the client (a man in the middle).
  const rewriting = async (input, init) => {
    const response = await fetch(input, init);
    if (!forge || !String(input).endsWith("/verify.php")) return response;
    const body = await response.json();
    body[forge.field] = forge.value ?? String(body[forge.field]).replace(/^./, (c) => (c === "0" ? "1" : "0"));
    return new Response(JSON.stringify(body), { status: response.status, headers: response.headers });
  };
  const client = createVerifyClient({ baseUrl: base, key, install: "packaged-browser", fetch: rewriting });
  const result = await client.verify({ domain: "example.com" });
  return { version: CLIENT_VERSION, node: typeof process !== "undefined", ...result };
};
// tamper: the price changed on its way, and the HMAC made again with the (public) client key.
globalThis.contentInBrowser = async ({ base, key, keyId, tamper }) => {
  const rewriting = async (input, init) => {
    const response = await fetch(input, init);
    if (!tamper || !String(input).endsWith("/content.php")) return response;
    let raw = (await response.text()).replace("19.99", "0.01");
    const body = JSON.parse(raw);
    const text = raw.slice(raw.indexOf('"content":') + 10, raw.lastIndexOf(',"ts":'));
    const hmac = await crypto.subtle.importKey("raw", new TextEncoder().encode(key), { name: "HMAC", hash: "SHA-256" }, false, ["sign"]);
    const mac = await crypto.subtle.sign("HMAC", hmac, new TextEncoder().encode(body.ts + "." + body.domain + "." + text));
    raw = raw.replace(body.signature, [...new Uint8Array(mac)].map((b) => b.toString(16).padStart(2, "0")).join(""));
    return new Response(raw, { status: response.status, headers: response.headers });
  };
  return createVerifyClient({ baseUrl: base, key, keyId, fetch: rewriting }).content({ domain: "example.com" });
};
`,
        resolveDir: project,
        sourcefile: "entry.js",
        loader: "js",
      },
      bundle: true,
      format: "esm",
      platform: "browser",
      write: false,
      logLevel: "silent",
    });
    const script = bundled.outputFiles[0].text;
    expect(script).toContain("gateway-js");

    site = createServer((req, res) => {
      if (req.url === "/client.js") res.writeHead(200, { "content-type": "text/javascript" }).end(script);
      else if (req.url === "/") {
        res
          .writeHead(200, { "content-type": "text/html; charset=utf-8" })
          .end('<!doctype html><meta charset="utf-8"><title>site</title><script type="module" src="/client.js"></script>');
      } else res.writeHead(404).end();
    });
    await new Promise<void>((resolve) => site?.listen(0, "127.0.0.1", resolve));
    const origin = `http://127.0.0.1:${(site.address() as AddressInfo).port}`;

    browser = await puppeteer.launch({ executablePath: "/usr/bin/chromium", headless: true, args: ["--no-sandbox"] });
    const page = await browser.newPage();
    const errors: string[] = [];
    page.on("pageerror", (error) => errors.push(String(error)));
    await page.goto(`${origin}/`);
    await page.waitForFunction(() => typeof (globalThis as { verifyInBrowser?: unknown }).verifyInBrowser === "function", WAIT);
    const base = `${gw.url}/api/v1`;
    const run = (key: string, forge?: { field: string; value?: unknown }) =>
      page.evaluate(
        (args) => (globalThis as unknown as { verifyInBrowser: (a: unknown) => Promise<Record<string, unknown>> }).verifyInBrowser(args),
        { base, key, forge },
      );

    // Cross-origin (the page's origin is not the gateway's): verify.php and keys.json answer CORS "*".
    const genuine = await run(own.key);
    expect(genuine, JSON.stringify(genuine)).toMatchObject({
      version: manifestVersion(),
      node: false,
      authorized: true,
      source: "service",
      reason: "ok",
      answer: { domain: "example.com", key: { id: own.id } },
      // Present only once the Ed25519 entitlement and lifeline checked against keys.json, after the HMAC.
      entitlement: { typ: "entitlement", dom: "example.com", key: own.id },
    });
    expect((genuine.answer as { signature: string }).signature).toMatch(/^[0-9a-f]{64}$/);

    // Tampered answers, as in verify-client.test.ts: the HMAC is checked against what was asked.
    const badSignature = { authorized: false, source: "client", reason: "bad_signature" };
    expect(await run(own.key, { field: "domain", value: "evil.example.com" })).toMatchObject(badSignature);
    expect(await run(own.key, { field: "signature" })).toMatchObject(badSignature);
    expect(await run(own.key, { field: "ts", value: 1 })).toMatchObject(badSignature);
    // A wrong key: the service refuses, and the client closes.
    const wrongKey = own.key.replace(/.$/, (c) => (c === "0" ? "1" : "0"));
    expect(await run(wrongKey)).toMatchObject({ authorized: false, source: "service", reason: "invalid_key" });

    // content(): the attestation checked with the browser's own WebCrypto Ed25519 against keys.json.
    await putContent(gw, made.orgId, "price", "number", 19.99);
    const content = (tamper: boolean) =>
      page.evaluate(
        (args) => (globalThis as unknown as { contentInBrowser: (a: unknown) => Promise<Record<string, unknown>> }).contentInBrowser(args),
        { base, key: own.key, keyId: own.id, tamper },
      );
    expect(await content(false)).toMatchObject({
      ok: true,
      source: "service",
      content: { price: { type: "number", value: 19.99 } },
      attestation: { typ: "content", key: own.id, dom: "example.com", ck: null },
    });
    expect(await content(true)).toMatchObject({ ok: false, source: "client", reason: "bad_attestation" });
    expect(errors).toEqual([]);
  }, 60_000);
});

let install: { files: string[]; project: string } | undefined;

/** Packs shared/client once (prepack builds dist/) and installs the tarball offline into an empty project. */
function installed(): { files: string[]; project: string } {
  if (install) return install;
  const packed = JSON.parse(npm(["pack", "--json", "--pack-destination", work], CLIENT_DIR)) as {
    filename: string;
    files: { path: string }[];
  }[];
  const project = join(work, "app");
  execFileSync("mkdir", ["-p", project]);
  writeFileSync(join(project, "package.json"), JSON.stringify({ name: "app", private: true, type: "module" }));
  npm(["install", join(work, packed[0].filename)], project);
  install = { files: packed[0].files.map((f) => f.path).sort(), project };
  return install;
}

function manifestVersion(): string {
  return (JSON.parse(readFileSync(join(CLIENT_DIR, "package.json"), "utf8")) as { version: string }).version;
}
