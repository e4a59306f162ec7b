#!/usr/bin/env node
// Project rules the compiler cannot see (README.md, Tests). The compiler half of `npm run lint` is
// `tsc -p tsconfig.test.json` (strict, unused locals and parameters, tests included).
// Biome was the first choice; its platform binaries are not on this project's registry,
// which makes `npm ci` fail, so these few rules are checked here instead.
import { readdirSync, readFileSync, statSync } from "node:fs";
import { dirname, join, relative, resolve } from "node:path";

const root = new URL("..", import.meta.url).pathname;
const SOURCE_DIRS = ["ingress", "actors", "shared", "ops"];
const TEST_DIRS = ["test"];
/** The dashboard's browser code (docs/dashboard.md): its own rules below. */
const DASHBOARD_DIRS = ["dashboard/src"];

function files(dir) {
  const out = [];
  for (const name of readdirSync(dir)) {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) out.push(...files(path));
    else if (path.endsWith(".ts") || path.endsWith(".tsx")) out.push(path);
  }
  return out;
}

const rules = [
  { name: "no any in shipped code", dirs: SOURCE_DIRS, pattern: /(:\s*any\b|\bas any\b|<any>)/ },
  { name: "no focused or skipped tests", dirs: TEST_DIRS, pattern: /\b(it|test|describe)\.(only|skip)\(/ },
  { name: "no Redis or PostgreSQL mocks", dirs: TEST_DIRS, pattern: /vi\.mock\(["'](ioredis|pg)["']/ },
  {
    name: "process.env only in entry points",
    dirs: SOURCE_DIRS,
    pattern: /process\.env\b/,
    allow: ["ops/start.ts", "ops/cli.ts", "ops/bench/", "ops/load/", "ops/cli/"],
  },
  {
    // docs/architecture.md, README.md "Architecture": every query lives in shared/db/<aggregate>.ts
    // (the bench's own resets excepted).
    name: "SQL only in shared/db",
    dirs: SOURCE_DIRS,
    pattern: /\.query\s*(<[^>]*>)?\s*\(/,
    allow: ["shared/db/", "ops/bench/", "shared/embed/"],
  },
  // docs/dashboard.md, Quality: every outside string is a text node; the page's policy
  // (style-src 'self') refuses inline styles, so looks are classes of style.css.
  { name: "no any in the dashboard", dirs: DASHBOARD_DIRS, pattern: /(:\s*any\b|\bas any\b|<any>)/ },
  { name: "no markup from strings in the dashboard", dirs: DASHBOARD_DIRS, pattern: /dangerouslySetInnerHTML|\.innerHTML\b|\.outerHTML\b|insertAdjacentHTML|document\.write\(/ },
  { name: "no inline styles in the dashboard", dirs: DASHBOARD_DIRS, pattern: /\bstyle=\{|\.style\.|setAttribute\(\s*["']style/ },
  {
    name: "no ambient time or randomness in the enforcement chain",
    dirs: ["shared/enforcement", "shared/botcheck"],
    pattern: /\b(Date\.now|Math\.random)\(/,
  },
];

/**
 * docs/architecture.md, README.md "Architecture": ingress/ and actors/ are siblings that both
 * stand on shared/; ops/ stands on all three. So a folder may import only from the folders it
 * stands on. Checked on the resolved path of every relative import (static, dynamic and
 * re-export).
 */
const LAYERS = {
  shared: ["shared"],
  ingress: ["ingress", "shared"],
  actors: ["actors", "shared"],
};
const IMPORT = /(?:\bfrom\s*|\bimport\s*\(\s*|^\s*import\s+)["'](\.[^"']*)["']/g;

/** The line without the contents of its string literals (their words are not code). */
function stripStrings(line) {
  return line.replace(/"(?:[^"\\]|\\.)*"|'(?:[^'\\]|\\.)*'|`(?:[^`\\]|\\.)*`/g, '""');
}

let failures = 0;
for (const rule of rules) {
  for (const dir of rule.dirs) {
    for (const file of files(join(root, dir))) {
      const rel = relative(root, file);
      if (rule.allow?.some((a) => rel.startsWith(a))) continue;
      readFileSync(file, "utf8").split("\n").forEach((line, i) => {
        if (line.trim().startsWith("//") || line.trim().startsWith("*")) return;
        if (rule.pattern.test(stripStrings(line))) {
          failures++;
          process.stderr.write(`${rel}:${i + 1}: ${rule.name}: ${line.trim()}\n`);
        }
      });
    }
  }
}
for (const [layer, allowed] of Object.entries(LAYERS)) {
  for (const file of files(join(root, layer))) {
    const rel = relative(root, file);
    readFileSync(file, "utf8").split("\n").forEach((line, i) => {
      if (line.trim().startsWith("//") || line.trim().startsWith("*")) return;
      for (const [, specifier] of line.matchAll(IMPORT)) {
        const target = relative(root, resolve(dirname(file), specifier)).split("/")[0];
        if (SOURCE_DIRS.includes(target) && !allowed.includes(target)) {
          failures++;
          process.stderr.write(`${rel}:${i + 1}: ${layer}/ must not import from ${target}/: ${line.trim()}\n`);
        }
      }
    });
  }
}
if (failures > 0) {
  process.stderr.write(`${failures} problem(s)\n`);
  process.exit(1);
}
process.stdout.write("lint: no problems\n");
