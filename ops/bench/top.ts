#!/usr/bin/env node
import { readFileSync } from "node:fs";

/**
 * The functions with the most self time in a V8 CPU profile (`node --cpu-prof`, or the
 * bench's `--profile DIR`), as a share of the busy time (idle excluded):
 *   node dist/ops/bench/top.js DIR/CPU.*.cpuprofile [--top N]
 */

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  hitCount?: number;
}

interface Profile {
  nodes: ProfileNode[];
  samples: number[];
}

function label(node: ProfileNode): string {
  const { functionName, url, lineNumber } = node.callFrame;
  const file = url.replace(/^file:\/\//, "").replace(/^.*\/(dist|node_modules)\//, "$1/");
  return `${functionName || "(anonymous)"}${file ? ` ${file}:${lineNumber + 1}` : ""}`;
}

function main(): void {
  const file = process.argv[2];
  if (!file) throw new Error("usage: top.js PROFILE.cpuprofile [--top N]");
  const topIndex = process.argv.indexOf("--top");
  const top = topIndex > 0 ? Number(process.argv[topIndex + 1]) : 20;
  const profile = JSON.parse(readFileSync(file, "utf8")) as Profile;
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  const self = new Map<string, number>();
  let busy = 0;
  for (const id of profile.samples) {
    const node = byId.get(id);
    if (!node || node.callFrame.functionName === "(idle)") continue;
    busy++;
    const name = label(node);
    self.set(name, (self.get(name) ?? 0) + 1);
  }
  process.stdout.write(`${busy} busy samples of ${profile.samples.length}\n`);
  for (const [name, hits] of [...self].sort((a, b) => b[1] - a[1]).slice(0, top)) {
    process.stdout.write(`${((100 * hits) / Math.max(busy, 1)).toFixed(1).padStart(6)}%  ${name}\n`);
  }
}

main();
