import { createHash } from "node:crypto";
import { mkdirSync, readdirSync, readFileSync, renameSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { gzipSync, constants } from "node:zlib";
import { DASHBOARD_DIR, type DashboardFile, type DashboardManifest } from "../../shared/embed/dashboard-asset.js";
import { sourcePath } from "../../shared/platform/paths.js";

/**
 * Builds the dashboard ({site_url}/dashboard, docs/dashboard.md) from dashboard/src/ (Preact
 * and TypeScript, typechecked by dashboard/tsconfig.json in `npm run lint`) with esbuild:
 * one minified script and one style sheet, each named by the hash of its content and
 * gzipped once here. `npm run build` runs it after tsc; the browser tests run it too.
 * The budget is 150 KB of gzipped script: a build over it fails.
 */

export const SCRIPT_BUDGET_GZIP_BYTES = 150 * 1024;

function writeAtomic(path: string, data: string | Buffer): void {
  const temp = `${path}.${process.pid}.tmp`;
  writeFileSync(temp, data);
  renameSync(temp, path);
}

function hashed(base: string, ext: string, code: Buffer): { file: DashboardFile; gzip: Buffer } {
  const name = `${base}.${createHash("sha256").update(code).digest("hex").slice(0, 12)}.${ext}`;
  const gzip = gzipSync(code, { level: constants.Z_BEST_COMPRESSION });
  return { file: { name, bytes: code.length, gzip_bytes: gzip.length }, gzip };
}

export async function buildDashboard(outDir: string = DASHBOARD_DIR): Promise<DashboardManifest> {
  // esbuild is a devDependency: loaded only when building, never by the running service.
  const esbuild = await import("esbuild");
  const script = await esbuild.build({
    entryPoints: [sourcePath("dashboard", "src", "main.tsx")],
    bundle: true,
    format: "iife",
    target: "es2020",
    jsx: "automatic",
    jsxImportSource: "preact",
    minify: true,
    legalComments: "none",
    write: false,
    charset: "utf8",
    define: { "process.env.NODE_ENV": '"production"' },
  });
  const style = await esbuild.transform(readFileSync(sourcePath("dashboard", "src", "style.css"), "utf8"), { loader: "css", minify: true });
  const jsCode = Buffer.from(script.outputFiles[0].text);
  const cssCode = Buffer.from(style.code);
  const js = hashed("app", "js", jsCode);
  const css = hashed("app", "css", cssCode);
  if (js.file.gzip_bytes > SCRIPT_BUDGET_GZIP_BYTES) {
    throw new Error(`dashboard script is ${js.file.gzip_bytes} bytes gzipped, over the ${SCRIPT_BUDGET_GZIP_BYTES} budget`);
  }
  mkdirSync(outDir, { recursive: true });
  const manifest: DashboardManifest = { js: js.file, css: css.file };
  const keep = new Set(["manifest.json"]);
  for (const [built, code] of [
    [js, jsCode],
    [css, cssCode],
  ] as const) {
    writeAtomic(join(outDir, built.file.name), code);
    writeAtomic(join(outDir, `${built.file.name}.gz`), built.gzip);
    keep.add(built.file.name).add(`${built.file.name}.gz`);
  }
  writeAtomic(join(outDir, "manifest.json"), `${JSON.stringify(manifest)}\n`);
  // Older builds' files go: the ingress serves only what the manifest names.
  for (const name of readdirSync(outDir)) if (!keep.has(name)) rmSync(join(outDir, name), { force: true });
  return manifest;
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  buildDashboard().then(
    (m) =>
      process.stdout.write(
        `dashboard ${m.js.name}: ${m.js.bytes} bytes minified, ${m.js.gzip_bytes} gzipped (budget ${SCRIPT_BUDGET_GZIP_BYTES}); ` +
          `${m.css.name}: ${m.css.bytes} bytes, ${m.css.gzip_bytes} gzipped\n`,
      ),
    (error: unknown) => {
      process.stderr.write(`dashboard build failed: ${String(error)}\n`);
      process.exit(1);
    },
  );
}
