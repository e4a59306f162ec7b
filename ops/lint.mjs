#!/usr/bin/env node
// Project rules the compiler and Biome cannot see (README.md, Tests; docs/architecture.md): the
// import graph between layers, rooms and actors, and a few bans. `npm run lint` runs, in order,
// `biome check .` (formatter and linter, biome.json), `tsc -p tsconfig.test.json` (strict, unused
// locals and parameters, tests included), the browser bundles' own tsconfigs, and this file.
import { readdirSync, readFileSync, statSync, existsSync } from "node:fs";
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
    // Build output (shared/client/dist: the client package's own build) is not source.
    if (statSync(path).isDirectory()) {
      if (name !== "dist" && name !== "node_modules") out.push(...files(path));
    } else if (path.endsWith(".ts") || path.endsWith(".tsx")) out.push(path);
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
    // docs/architecture.md: every query lives in a table-access file, shared/<room>/db/<table>.ts
    // (shared/platform/db/ for the pool, the migrator and settings); the bench's own resets excepted.
    name: "SQL only in table-access files (shared/<room>/db/)",
    dirs: SOURCE_DIRS,
    pattern: /\.query\s*(<[^>]*>)?\s*\(/,
    allow: [/^shared\/[^/]+\/db\//, "ops/bench/", "shared/embed/"],
  },
  // docs/dashboard.md, Quality: every outside string is a text node; the page's policy
  // (style-src 'self') refuses inline styles, so looks are classes of style.css.
  { name: "no any in the dashboard", dirs: DASHBOARD_DIRS, pattern: /(:\s*any\b|\bas any\b|<any>)/ },
  {
    name: "no markup from strings in the dashboard",
    dirs: DASHBOARD_DIRS,
    pattern: /dangerouslySetInnerHTML|\.innerHTML\b|\.outerHTML\b|insertAdjacentHTML|document\.write\(/,
  },
  { name: "no inline styles in the dashboard", dirs: DASHBOARD_DIRS, pattern: /\bstyle=\{|\.style\.|setAttribute\(\s*["']style/ },
  {
    name: "no ambient time or randomness in the enforcement chain",
    dirs: ["shared/verify", "shared/botcheck"],
    // the projector and the verify room's table access run beside the chain, not in it
    allow: ["shared/verify/snapshots/", "shared/verify/db/"],
    pattern: /\b(Date\.now|Math\.random)\(/,
  },
];

/** The line without the contents of its string literals (their words are not code). */
function stripStrings(line) {
  return line.replace(/"(?:[^"\\]|\\.)*"|'(?:[^'\\]|\\.)*'|`(?:[^`\\]|\\.)*`/g, '""');
}

let failures = 0;
for (const rule of rules) {
  for (const dir of rule.dirs) {
    for (const file of files(join(root, dir))) {
      const rel = relative(root, file);
      if (rule.allow?.some((a) => (typeof a === "string" ? rel.startsWith(a) : a.test(rel)))) continue;
      readFileSync(file, "utf8")
        .split("\n")
        .forEach((line, i) => {
          if (line.trim().startsWith("//") || line.trim().startsWith("*")) return;
          if (rule.pattern.test(stripStrings(line))) {
            failures++;
            process.stderr.write(`${rel}:${i + 1}: ${rule.name}: ${line.trim()}\n`);
          }
        });
    }
  }
}

/*
 * The import graph (docs/architecture.md, "Rules the linter keeps"). Every relative import of
 * every .ts file (static, type-only, dynamic, side-effect and re-export) is resolved to the file
 * it names; then:
 *   1. no actor imports another actor: actors/<a>/ may import actors/runtime/ and actors/*.ts,
 *      never actors/<b>/ (what two actors share lives in shared/);
 *   2. no deep import across rooms: from outside shared/<room>/ (a domain room), only
 *      shared/<room>/index.ts may be imported. shared/platform/ is imported by path (it is a
 *      toolbox, not a domain); tests may import a room's internals (they test them);
 *      shared/platform/ imports no room (domains stand on the platform, not the reverse);
 *      shared/embed/botcheck/, shared/embed/signin/ (browser bundles) and shared/client/ build
 *      on their own: they import only their own files, or types (`import type`, erased);
 *   3. no import cycle between rooms (the rooms of shared/ are nodes, imports outside test/ edges);
 *   4. ingress/ and actors/ are siblings that both stand on shared/; shared/ stands on nothing
 *      else; ops/ stands on all three.
 */
const ROOMS = ["verify", "scans", "findings", "events", "status", "botcheck", "accounts"];
/** The browser widgets and the client library: bundled or published on their own. */
const STANDALONE = ["shared/embed/botcheck/", "shared/embed/signin/", "shared/client/"];
const standalone = (rel) => STANDALONE.find((d) => rel.startsWith(d));
const LAYERS = {
  shared: ["shared"],
  ingress: ["ingress", "shared"],
  actors: ["actors", "shared"],
};
const SPECIFIER =
  /(\bimport\s+type\b[^"';]*?\bfrom\s*|\bexport\s+type\b[^"';]*?\bfrom\s*|\bfrom\s*|\bimport\s*\(\s*|\bimport\s+|\bvi\.(?:mock|doMock|importActual)\(\s*)(["'])(\.{1,2}\/[^"']*)\2/g;

/** The source without comments (a doc comment's example is not an import). */
function code(text) {
  return text.replace(/\/\*[\s\S]*?\*\//g, (c) => c.replace(/[^\n]/g, " ")).replace(/^\s*\/\/.*$/gm, "");
}
function sourceOf(path) {
  for (const candidate of [path, path.replace(/\.js$/, ".ts"), path.replace(/\.js$/, ".tsx"), path.replace(/\.mjs$/, ".mts")]) {
    if (existsSync(candidate) && statSync(candidate).isFile()) return candidate;
  }
  return null;
}
/** Every relative import of a file: { line, target (repo-relative, resolved), typeOnly, text }. */
function importsOf(file) {
  const text = code(readFileSync(file, "utf8"));
  const out = [];
  for (const m of text.matchAll(SPECIFIER)) {
    const line = text.slice(0, m.index).split("\n").length;
    const resolved = sourceOf(resolve(dirname(file), m[3]));
    out.push({ line, spec: m[3], target: resolved && relative(root, resolved), typeOnly: /^(import|export)\s+type\b/.test(m[1]) });
  }
  return out;
}
const roomOf = (rel) => (rel.startsWith("shared/") ? rel.split("/")[1] : null);
const fail = (rel, line, message) => {
  failures++;
  process.stderr.write(`${rel}:${line}: ${message}\n`);
};
const roomEdges = new Map(); // "a>b" -> first import seen
for (const top of [...SOURCE_DIRS, ...TEST_DIRS]) {
  for (const file of files(join(root, top))) {
    const rel = relative(root, file);
    const [layer, second] = rel.split("/");
    const fromRoom = roomOf(rel);
    for (const imp of importsOf(file)) {
      if (!imp.target) {
        fail(rel, imp.line, `import "${imp.spec}" names no file`);
        continue;
      }
      const [targetLayer, targetSecond] = imp.target.split("/");
      const toRoom = roomOf(imp.target);
      if (LAYERS[layer] && SOURCE_DIRS.includes(targetLayer) && !LAYERS[layer].includes(targetLayer)) {
        fail(rel, imp.line, `${layer}/ must not import from ${targetLayer}/ ("${imp.spec}")`);
      }
      if (
        layer === "actors" &&
        targetLayer === "actors" &&
        rel.split("/").length > 2 &&
        imp.target.split("/").length > 2 &&
        targetSecond !== second &&
        targetSecond !== "runtime"
      ) {
        fail(rel, imp.line, `actor ${second} imports actor ${targetSecond} ("${imp.spec}"): move the shared part into shared/`);
      }
      if (layer === "test") continue;
      if (fromRoom !== toRoom && toRoom) {
        // A file with no imports of its own (the proof-of-work, the interaction summary) is
        // plain code both sides may share: bundling it brings nothing server-side along.
        if (standalone(rel) && !imp.typeOnly && importsOf(join(root, imp.target)).length > 0) {
          fail(
            rel,
            imp.line,
            `${standalone(rel)} builds on its own: it imports only its own files, types, or files that import nothing ("${imp.spec}")`,
          );
        } else if (fromRoom === "platform" && toRoom !== "platform") {
          fail(rel, imp.line, `shared/platform/ imports no room ("${imp.spec}"): the rooms stand on the platform`);
        } else if (ROOMS.includes(toRoom) && imp.target !== `shared/${toRoom}/index.ts` && !standalone(rel)) {
          fail(rel, imp.line, `deep import of shared/${toRoom}/: import shared/${toRoom}/index.js ("${imp.spec}")`);
        }
        if (fromRoom) {
          const edge = `${fromRoom}>${toRoom}`;
          if (!roomEdges.has(edge)) roomEdges.set(edge, `${rel}:${imp.line}`);
        }
      }
    }
  }
}
// Rooms on a cycle: strongly connected components of more than one room (Tarjan).
{
  const next = new Map();
  for (const edge of roomEdges.keys()) {
    const [a, b] = edge.split(">");
    next.set(a, [...(next.get(a) ?? []), b]);
  }
  let counter = 0;
  const index = new Map(),
    low = new Map(),
    stack = [],
    onStack = new Set();
  const visit = (v) => {
    index.set(v, counter);
    low.set(v, counter);
    counter++;
    stack.push(v);
    onStack.add(v);
    for (const w of next.get(v) ?? []) {
      if (!index.has(w)) {
        visit(w);
        low.set(v, Math.min(low.get(v), low.get(w)));
      } else if (onStack.has(w)) low.set(v, Math.min(low.get(v), index.get(w)));
    }
    if (low.get(v) === index.get(v)) {
      const component = [];
      let w;
      do {
        w = stack.pop();
        onStack.delete(w);
        component.push(w);
      } while (w !== v);
      if (component.length > 1) {
        const where = [...roomEdges]
          .filter(([e]) => component.includes(e.split(">")[0]) && component.includes(e.split(">")[1]))
          .map(([e, at]) => `${e.replace(">", " -> ")} (${at})`);
        failures++;
        process.stderr.write(`import cycle between rooms ${component.sort().join(", ")}: ${where.join("; ")}\n`);
      }
    }
  };
  for (const v of next.keys()) if (!index.has(v)) visit(v);
}
if (failures > 0) {
  process.stderr.write(`${failures} problem(s)\n`);
  process.exit(1);
}
process.stdout.write("lint: no problems\n");
