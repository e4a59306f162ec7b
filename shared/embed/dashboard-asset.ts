import { readFileSync } from "node:fs";
import { join } from "node:path";
import { sourcePath } from "../platform/paths.js";

/**
 * The built dashboard (ops/embed/dashboard-build.ts writes it; `npm run build` runs that):
 * one script and one style sheet, each named by a hash of its content so the ingress can
 * cache them for a year, each stored minified and gzipped once at build time.
 */

export const DASHBOARD_DIR = sourcePath("dist", "dashboard");

export interface DashboardFile {
  /** `app.<12 hex of SHA-256>.js` or `.css`: the name in /dashboard/assets/. */
  name: string;
  bytes: number;
  gzip_bytes: number;
}

export interface DashboardManifest {
  js: DashboardFile;
  css: DashboardFile;
}

export interface DashboardAsset {
  manifest: DashboardManifest;
  /** By asset name: the bytes, their gzip, and the content type. */
  files: ReadonlyMap<string, { code: Buffer; gzip: Buffer; type: string }>;
}

export function readDashboardAsset(dir: string = DASHBOARD_DIR): DashboardAsset | null {
  try {
    const manifest = JSON.parse(readFileSync(join(dir, "manifest.json"), "utf8")) as DashboardManifest;
    const files = new Map<string, { code: Buffer; gzip: Buffer; type: string }>();
    for (const [file, type] of [
      [manifest.js, "text/javascript; charset=utf-8"],
      [manifest.css, "text/css; charset=utf-8"],
    ] as const) {
      files.set(file.name, { code: readFileSync(join(dir, file.name)), gzip: readFileSync(join(dir, `${file.name}.gz`)), type });
    }
    return { manifest, files };
  } catch {
    return null;
  }
}

/** Loads once and keeps it; a missing build is retried on the next call rather than remembered. */
export function dashboardAssetLoader(dir: string = DASHBOARD_DIR): () => DashboardAsset | null {
  let asset: DashboardAsset | null = null;
  return () => (asset ??= readDashboardAsset(dir));
}
