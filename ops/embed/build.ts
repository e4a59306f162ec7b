import { createHash } from "node:crypto";
import { mkdirSync, renameSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { gzipSync, constants } from "node:zlib";
import { EMBED_DIR, type EmbedManifest } from "../../shared/embed/asset.js";
import { sourcePath } from "../../shared/platform/paths.js";

/**
 * Builds the page script `{site_url}/botcheck.js` from shared/embed/botcheck/ (TypeScript,
 * typechecked by its own tsconfig in `npm run lint`) with esbuild: one IIFE, ES2017,
 * minified, then gzipped once here so the ingress serves the bytes as they are.
 * `npm run build` runs it after tsc; the browser tests run it too, so they always test
 * the current source. Output: EMBED_DIR/botcheck.js, botcheck.js.gz, botcheck.json.
 */

function writeAtomic(path: string, data: string | Buffer): void {
  const temp = `${path}.${process.pid}.tmp`;
  writeFileSync(temp, data);
  renameSync(temp, path);
}

export async function buildEmbed(outDir: string = EMBED_DIR): Promise<EmbedManifest> {
  // esbuild is a devDependency: loaded only when building, never by the running service.
  const esbuild = await import("esbuild");
  const built = await esbuild.build({
    entryPoints: [sourcePath("shared", "embed", "botcheck", "main.ts")],
    bundle: true,
    format: "iife",
    target: "es2017",
    minify: true,
    legalComments: "none",
    write: false,
    charset: "utf8",
  });
  const draft = built.outputFiles[0].text;
  const version = createHash("sha256").update(draft).digest("hex").slice(0, 12);
  const code = Buffer.from(draft.replace("__VERSION__", version));
  const gzip = gzipSync(code, { level: constants.Z_BEST_COMPRESSION });
  mkdirSync(outDir, { recursive: true });
  const manifest: EmbedManifest = { version, bytes: code.length, gzip_bytes: gzip.length };
  writeAtomic(join(outDir, "botcheck.js"), code);
  writeAtomic(join(outDir, "botcheck.js.gz"), gzip);
  writeAtomic(join(outDir, "botcheck.json"), `${JSON.stringify(manifest)}\n`);
  return manifest;
}

/**
 * The script of the sign-in and invitation pages (`/dashboard/signin`, `/dashboard/invitation`)
 * from shared/embed/signin/ (@simplewebauthn/browser bundled in): one minified IIFE for
 * browsers with WebAuthn (ES2020). Output: EMBED_DIR/signin.js and signin.json (its version).
 */
export async function buildSigninScript(outDir: string = EMBED_DIR): Promise<{ version: string; bytes: number }> {
  const esbuild = await import("esbuild");
  const built = await esbuild.build({
    entryPoints: [sourcePath("shared", "embed", "signin", "main.ts")],
    bundle: true,
    format: "iife",
    target: "es2020",
    minify: true,
    legalComments: "none",
    write: false,
    charset: "utf8",
  });
  const code = Buffer.from(built.outputFiles[0].text);
  const manifest = { version: createHash("sha256").update(code).digest("hex").slice(0, 12), bytes: code.length };
  mkdirSync(outDir, { recursive: true });
  writeAtomic(join(outDir, "signin.js"), code);
  writeAtomic(join(outDir, "signin.json"), `${JSON.stringify(manifest)}\n`);
  return manifest;
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  Promise.all([buildEmbed(), buildSigninScript()]).then(
    ([m, s]) =>
      process.stdout.write(
        `botcheck.js ${m.version}: ${m.bytes} bytes minified, ${m.gzip_bytes} gzipped; signin.js ${s.version}: ${s.bytes} bytes\n`,
      ),
    (error: unknown) => {
      process.stderr.write(`embed build failed: ${String(error)}\n`);
      process.exit(1);
    },
  );
}
