import { execFile } from "node:child_process";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";

/**
 * Debian's wrk as the load generator: a C event loop that drives a bare uWS server past
 * 100k req/s on this machine, where autocannon (JavaScript) tops out near 66k and so
 * capped the bare baselines the ratios are taken against.
 */

const run = promisify(execFile);

export interface WrkRun {
  requests: number;
  rps: number;
  p50: number;
  p99: number;
  non2xx: number;
  errors: number;
}

export async function wrkAvailable(): Promise<boolean> {
  try {
    await run("wrk", ["--version"]).catch((error: { stdout?: string }) => {
      // wrk --version prints its banner and exits 1.
      if (!String(error.stdout ?? "").includes("wrk")) throw error;
    });
    return true;
  } catch {
    return false;
  }
}

function luaString(value: string): string {
  return `"${value.replace(/\\/g, "\\\\").replace(/"/g, '\\"').replace(/\n/g, "\\n")}"`;
}

/** Milliseconds from wrk's `1.23ms` / `456.00us` / `1.20s`. */
function duration(text: string): number {
  const match = /^([\d.]+)(us|ms|s|m)$/.exec(text.trim());
  if (!match) return NaN;
  const value = Number(match[1]);
  return match[2] === "us" ? value / 1000 : match[2] === "ms" ? value : match[2] === "s" ? value * 1000 : value * 60_000;
}

export function parseWrk(output: string): WrkRun {
  const number = (pattern: RegExp) => Number(pattern.exec(output)?.[1] ?? 0);
  const requests = number(/(\d+) requests in/);
  const socket = /Socket errors: connect (\d+), read (\d+), write (\d+), timeout (\d+)/.exec(output);
  return {
    requests,
    rps: number(/Requests\/sec:\s+([\d.]+)/),
    p50: duration(/^\s+50%\s+(\S+)/m.exec(output)?.[1] ?? ""),
    p99: duration(/^\s+99%\s+(\S+)/m.exec(output)?.[1] ?? ""),
    non2xx: number(/Non-2xx or 3xx responses: (\d+)/),
    errors: socket ? socket.slice(1).reduce((sum, n) => sum + Number(n), 0) : 0,
  };
}

/** One wrk run: POST of `body` with `headers`, one thread, `connections` connections. */
export async function wrkOnce(
  url: string,
  body: string,
  headers: Record<string, string>,
  connections: number,
  durationS: number,
  threads = 1,
): Promise<WrkRun> {
  const dir = await mkdtemp(join(tmpdir(), "bench-wrk-"));
  try {
    const script = join(dir, "post.lua");
    const lines = ['wrk.method = "POST"', `wrk.body = ${luaString(body)}`, 'wrk.headers["Content-Type"] = "application/json"'];
    for (const [name, value] of Object.entries(headers)) lines.push(`wrk.headers[${luaString(name)}] = ${luaString(value)}`);
    await writeFile(script, `${lines.join("\n")}\n`);
    const { stdout } = await run(
      "wrk",
      [`-t${threads}`, `-c${connections}`, `-d${durationS}s`, "--latency", "--timeout", "5s", "-s", script, url],
      { maxBuffer: 1 << 20 },
    );
    return parseWrk(stdout);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}
