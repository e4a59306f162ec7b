import { execFile } from "node:child_process";
import { readFileSync } from "node:fs";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestGateway, type TestGateway } from "../../helpers/gateway.js";
import { clientSetup, type MadeKey } from "../../ingress/routes/verify-fixtures.js";

/** The Python signature check of docs/client.md, exactly as printed, against live verify answers. */

const DOC = readFileSync(new URL("../../../docs/client.md", import.meta.url), "utf8");
const PYTHON = /```python\n([\s\S]*?)```/.exec(DOC)?.[1] ?? "";

let gw: TestGateway;
let made: MadeKey;
beforeAll(async () => {
  gw = await startTestGateway("signature-snippets");
  made = await clientSetup(gw);
});
afterAll(async () => {
  await gw?.stop();
});

async function python(answer: unknown, apiKey: string, nonce: string): Promise<string> {
  const driver = `${PYTHON}\nimport json, sys\nprint(verify_signature(sys.argv[1], json.loads(sys.argv[2]), sys.argv[3]))\n`;
  const { stdout } = await promisify(execFile)("python3", ["-c", driver, apiKey, JSON.stringify(answer), nonce], { encoding: "utf8" });
  return stdout.trim();
}

describe("docs/client.md: the Python signature check", () => {
  it("accepts a live answer, with and without a nonce, and refuses a changed one", async () => {
    expect(PYTHON).toContain("def verify_signature");
    const nonce = "0123456789abcdef0123456789abcdef";
    const withNonce = await gw.call("/api/v1/verify.php", { body: { key: made.key, domain: "example.com", nonce } });
    expect(withNonce.body.authorized).toBe(true);
    expect(await python(withNonce.body, made.key, nonce)).toBe("True");
    const plain = await gw.call("/api/v1/verify.php", { body: { key: made.key, domain: "example.com" } });
    expect(await python(plain.body, made.key, "")).toBe("True");
    expect(await python({ ...plain.body, domain: "evil.example" }, made.key, "")).toBe("False");
    expect(await python(withNonce.body, made.key, "another-nonce")).toBe("False");
    expect(await python(plain.body, `${made.key}x`, "")).toBe("False");
    expect(await python({ ...plain.body, ts: plain.body.ts - 600 }, made.key, "")).toBe("False");
  });
});
