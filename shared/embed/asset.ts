import { readFileSync } from "node:fs";
import { join } from "node:path";
import { sourcePath } from "../platform/paths.js";

/**
 * The built page script (ops/embed/build.ts writes it; `npm run build` runs that). The
 * ingress serves these bytes as they are: minified, and gzipped once at build time.
 */

export const EMBED_DIR = sourcePath("dist", "embed");

export interface EmbedManifest {
  /** First 12 hex characters of the SHA-256 of the script: the `?v=` of its URL. */
  version: string;
  bytes: number;
  gzip_bytes: number;
}

export interface EmbedAsset {
  manifest: EmbedManifest;
  code: Buffer;
  gzip: Buffer;
}

/** Reads the built script; null when it was never built (the caller answers a fault). */
export function readEmbedAsset(dir: string = EMBED_DIR): EmbedAsset | null {
  try {
    const manifest = JSON.parse(readFileSync(join(dir, "botcheck.json"), "utf8")) as EmbedManifest;
    return { manifest, code: readFileSync(join(dir, "botcheck.js")), gzip: readFileSync(join(dir, "botcheck.js.gz")) };
  } catch {
    return null;
  }
}

/** Loads once and keeps it; a missing build is retried on the next call rather than remembered. */
export function embedAssetLoader(dir: string = EMBED_DIR): () => EmbedAsset | null {
  let asset: EmbedAsset | null = null;
  return () => (asset ??= readEmbedAsset(dir));
}

/** A page script of the service's own pages (the sign-in pages' `signin.js`): served as built, not gzipped. */
export interface PageScript {
  version: string;
  code: Buffer;
}

/** Loads `<name>.js` and its manifest once; a missing build is retried on the next call. */
export function pageScriptLoader(name: string, dir: string = EMBED_DIR): () => PageScript | null {
  let script: PageScript | null = null;
  return () => {
    if (script) return script;
    try {
      const manifest = JSON.parse(readFileSync(join(dir, `${name}.json`), "utf8")) as { version: string };
      script = { version: manifest.version, code: readFileSync(join(dir, `${name}.js`)) };
    } catch {
      script = null;
    }
    return script;
  };
}
