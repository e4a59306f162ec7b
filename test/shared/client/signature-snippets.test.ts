import { execFile } from "node:child_process";
import { createHmac } from "node:crypto";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestGateway, type TestGateway } from "../../helpers/gateway.js";
import { clientSetup, type MadeKey } from "../../ingress/routes/verify-fixtures.js";

/**
 * The Python, PHP and Go signature checks of docs/client.md, exactly as printed, against live
 * verify answers: each fenced block is wrapped in a small driver that reads the API key, the
 * answer's JSON and the nonce from argv and prints True or False. PHP and Go come from Debian
 * (php-cli, golang-go; test/helpers/test-tools.ts installs or names them); Go builds the driver
 * once, offline (stdlib only, GOPROXY=off, GOTOOLCHAIN=local), with its caches in a temp dir.
 */

const DOC = readFileSync(new URL("../../../docs/client.md", import.meta.url), "utf8");
const block = (lang: string) => new RegExp(`\`\`\`${lang}\\n([\\s\\S]*?)\`\`\``).exec(DOC)?.[1] ?? "";
const PYTHON = block("python");
const PHP = block("php");
const GO = block("go");
/** The Go block names its imports in a comment; the driver imports exactly those (Go refuses unused ones). */
const GO_IMPORTS = (/\(imports: ([^)]*)\)/.exec(GO)?.[1] ?? "").split(",").map((name) => name.trim());

const run = promisify(execFile);
let work: string;
let gw: TestGateway;
let made: MadeKey;
beforeAll(async () => {
  work = mkdtempSync(path.join(tmpdir(), "signature-snippets-"));
  gw = await startTestGateway("signature-snippets");
  made = await clientSetup(gw);
});
afterAll(async () => {
  await gw?.stop();
  if (work) rmSync(work, { recursive: true, force: true });
});

type Check = (answer: unknown, apiKey: string, nonce: string) => Promise<string>;

async function python(answer: unknown, apiKey: string, nonce: string): Promise<string> {
  const driver = `${PYTHON}\nimport json, sys\nprint(verify_signature(sys.argv[1], json.loads(sys.argv[2]), sys.argv[3]))\n`;
  const { stdout } = await run("python3", ["-c", driver, apiKey, JSON.stringify(answer), nonce], { encoding: "utf8" });
  return stdout.trim();
}

async function php(answer: unknown, apiKey: string, nonce: string): Promise<string> {
  const file = path.join(work, "verify.php");
  const driver = `<?php\n${PHP}\necho verify_signature($argv[1], json_decode($argv[2], true), $argv[3]) ? "True" : "False";\n`;
  writeFileSync(file, driver);
  const { stdout } = await run("php", [file, apiKey, JSON.stringify(answer), nonce], { encoding: "utf8" });
  return stdout.trim();
}

/** Builds the Go driver once (its duration is logged) and returns the check that runs the binary. */
async function buildGo(): Promise<Check> {
  const dir = path.join(work, "go");
  const imports = [...new Set([...GO_IMPORTS, "encoding/json", "os"])].map((name) => `\t"${name}"`).join("\n");
  const main = `func main() {
\tvar a Answer
\tif err := json.Unmarshal([]byte(os.Args[2]), &a); err != nil {
\t\tpanic(err)
\t}
\tif VerifySignature(os.Args[1], a, os.Args[3]) {
\t\tfmt.Println("True")
\t} else {
\t\tfmt.Println("False")
\t}
}
`;
  const source = path.join(work, "verify.go");
  writeFileSync(source, `package main\n\nimport (\n${imports}\n)\n\n${GO}\n${main}`);
  const binary = path.join(work, "verify-go");
  const env = {
    PATH: process.env.PATH ?? "",
    HOME: dir,
    GOCACHE: path.join(dir, "cache"),
    GOPATH: path.join(dir, "path"),
    GOTOOLCHAIN: "local",
    GOPROXY: "off",
    GOFLAGS: "",
    CGO_ENABLED: "0",
  };
  const started = performance.now();
  await run("go", ["build", "-o", binary, source], { env, cwd: work, encoding: "utf8" });
  console.info(`signature-snippets: go build of the Go snippet took ${Math.round(performance.now() - started)} ms`);
  return async (answer, apiKey, nonce) => {
    const { stdout } = await run(binary, [apiKey, JSON.stringify(answer), nonce], { encoding: "utf8" });
    return stdout.trim();
  };
}

type Answer = { ts: number; key: { id: number }; domain: string; expires_in: number; signature: string };

/** The answer moved to another `ts` and signed again with the key: only the freshness check can refuse it. */
function resigned(answer: Answer, apiKey: string, ts: number): Answer {
  const signature = createHmac("sha256", apiKey).update(`${ts}.${answer.key.id}.1.${answer.domain}`).digest("hex");
  return { ...answer, ts, signature };
}

const CASES: { lang: string; marker: string; code: () => string; check: () => Promise<Check> }[] = [
  { lang: "Python", marker: "def verify_signature", code: () => PYTHON, check: async () => python },
  { lang: "PHP", marker: "function verify_signature", code: () => PHP, check: async () => php },
  { lang: "Go", marker: "func VerifySignature", code: () => GO, check: buildGo },
];

for (const { lang, marker, code, check: make } of CASES) {
  describe(`docs/client.md: the ${lang} signature check`, () => {
    it("accepts a live answer, with and without a nonce, and refuses a changed or stale one", async () => {
      expect(code()).toContain(marker);
      const check = await make();
      const nonce = "0123456789abcdef0123456789abcdef";
      const withNonce = await gw.call("/api/v1/verify.php", { body: { key: made.key, domain: "example.com", nonce } });
      expect(withNonce.body.authorized).toBe(true);
      expect(await check(withNonce.body, made.key, nonce)).toBe("True");
      const plain = await gw.call("/api/v1/verify.php", { body: { key: made.key, domain: "example.com" } });
      const answer = plain.body as Answer;
      expect(await check(answer, made.key, "")).toBe("True");
      expect(await check({ ...answer, domain: "evil.example" }, made.key, "")).toBe("False");
      expect(await check(withNonce.body, made.key, "another-nonce")).toBe("False");
      expect(await check(withNonce.body, made.key, "")).toBe("False");
      expect(await check(answer, `${made.key}x`, "")).toBe("False");
      expect(await check({ ...answer, ts: answer.ts - 600 }, made.key, "")).toBe("False");
      expect(await check({ ...answer, authorized: false }, made.key, "")).toBe("False");
      // Correctly signed but outside expires_in, in either direction; just inside it, accepted.
      expect(resigned(answer, made.key, answer.ts).signature).toBe(answer.signature);
      expect(await check(resigned(answer, made.key, answer.ts - 600), made.key, "")).toBe("False");
      expect(await check(resigned(answer, made.key, answer.ts + 600), made.key, "")).toBe("False");
      expect(await check(resigned(answer, made.key, answer.ts - answer.expires_in + 30), made.key, "")).toBe("True");
    });
  });
}
