import { type ChildProcess, execFileSync, spawn } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, existsSync, writeFileSync } from "node:fs";
import net from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { EVENT_TYPES, insertEvent } from "../../../shared/events/db/events.js";
import { PAYLOADS } from "../../fixtures/event-payloads.js";
import { octetFrame } from "../../../shared/events/syslog.js";
import { startTestGateway, waitFor, type TestGateway } from "../../helpers/gateway.js";
import { makeKey, makeOrg } from "./verify-fixtures.js";
import { freePort } from "../../../shared/platform/net/free-port.js";

/**
 * A real syslog daemon reads the feed's syslog lines: Debian's rsyslogd (installed by
 * .ci/run), its RFC 5424 parser only, fed over TCP with the octet counting the pusher
 * uses. A line rsyslog cannot parse as RFC 5424 comes out with empty APP-NAME and MSGID.
 */
let gw: TestGateway;
let serverKey: string;
let orgId: number;
let daemon: ChildProcess | null = null;
const dir = mkdtempSync(join(tmpdir(), "rsyslog-events-"));

beforeAll(async () => {
  gw = await startTestGateway("rsyslog");
  orgId = await makeOrg(gw, { plan: "enterprise" });
  serverKey = (await makeKey(gw, orgId, { name: "SIEM", kind: "server", domain: undefined })).key;
});
afterAll(async () => {
  if (daemon?.pid) process.kill(daemon.pid, "SIGKILL");
  rmSync(dir, { recursive: true, force: true });
  await gw?.stop();
});

describe("events.php syslog lines through rsyslog", () => {
  it("rsyslogd parses every line as RFC 5424 with our fields", async () => {
    const rsyslogd = execFileSync("sh", ["-c", "command -v rsyslogd || ls /usr/sbin/rsyslogd"]).toString().trim();
    for (const [i, type] of EVENT_TYPES.entries()) {
      await insertEvent(gw.ctx.db, {
        orgId,
        type,
        timeMs: gw.ctx.clock.now(),
        domain: `d${i}.example`,
        payload: { ...PAYLOADS[type], finding_key: i % 2 ? 'web:q"]\\x' : "dns:spf", note: "unicode é ✓", owner: null },
      });
    }
    const res = await gw.call("/api/v1/events.php", { query: { key: serverKey, format: "syslog" } });
    const lines = String(res.body)
      .split("\n")
      .filter((l) => l !== "");
    expect(lines).toHaveLength(EVENT_TYPES.length);

    const port = await freePort();
    const out = join(dir, "out.log");
    writeFileSync(
      join(dir, "rsyslog.conf"),
      [
        `global(workDirectory="${dir}")`,
        'module(load="imtcp")',
        'template(name="fields" type="string" string="%protocol-version%|%syslogfacility%|%syslogseverity%|%app-name%|%msgid%|%structured-data%|%msg%\\n")',
        `ruleset(name="strict" parser="rsyslog.rfc5424") { action(type="omfile" file="${out}" template="fields") }`,
        `input(type="imtcp" port="${port}" ruleset="strict")`,
      ].join("\n"),
    );
    daemon = spawn(rsyslogd, ["-n", "-f", join(dir, "rsyslog.conf"), "-i", join(dir, "rsyslogd.pid")], { stdio: "ignore" });
    await waitFor(
      () =>
        new Promise<boolean>((resolve) => {
          const probe = net.connect(port, "127.0.0.1", () => probe.end(() => resolve(true)));
          probe.on("error", () => resolve(false));
        }),
      10_000,
    );
    await new Promise<void>((resolve, reject) => {
      const socket = net.connect(port, "127.0.0.1", () => socket.end(lines.map(octetFrame).join("")));
      socket.on("close", () => resolve());
      socket.on("error", reject);
    });
    const parsed = await waitFor(() => {
      const text = existsSync(out) ? readFileSync(out, "utf8") : "";
      const rows = text.split("\n").filter((l) => l !== "");
      return rows.length >= lines.length ? rows : null;
    }, 10_000);
    expect(parsed).toHaveLength(lines.length);
    parsed.forEach((row, i) => {
      const [version, facility, severity, app, msgid] = row.split("|");
      expect({ version, facility, app, msgid }).toEqual({ version: "1", facility: "10", app: "access-gateway", msgid: EVENT_TYPES[i] });
      expect(["4", "5", "6"]).toContain(severity);
      expect(row).toContain(`[gateway@32473 event_id="`);
      // MSG is the event JSON, whole.
      const msg = row.slice(row.indexOf("]|{") + 2);
      expect(JSON.parse(msg)).toMatchObject({ type: EVENT_TYPES[i], domain: `d${i}.example`, note: "unicode é ✓" });
    });
  });
});
