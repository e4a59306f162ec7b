import { execFileSync } from "node:child_process";
import { accessSync, constants } from "node:fs";
import path from "node:path";

/** What the check looks at: a command on PATH, an executable file, a Python module. */
export interface ToolProbe {
  command(name: string): boolean;
  file(path: string): boolean;
  python(module: string): boolean;
}

/**
 * The real programs the tests drive and the Debian package of each, as `.ci/run` installs
 * them: a test that spawns one of them must not die on `spawn nginx ENOENT`.
 */
export const TEST_TOOLS: readonly {
  pkg: string;
  present(probe: ToolProbe): boolean;
}[] = [
  { pkg: "prometheus", present: (p) => p.command("promtool") },
  { pkg: "chromium", present: (p) => p.command("chromium") },
  {
    pkg: "nginx-light",
    present: (p) => p.command("nginx") || p.file("/usr/sbin/nginx"),
  },
  { pkg: "knot", present: (p) => p.command("knotd") },
  { pkg: "unbound", present: (p) => p.command("unbound") },
  { pkg: "ldnsutils", present: (p) => p.command("ldns-signzone") },
  { pkg: "rsyslog", present: (p) => p.file("/usr/sbin/rsyslogd") },
  { pkg: "python3-feedparser", present: (p) => p.python("feedparser") },
  // docs/client.md's PHP and Go signature snippets (test/shared/client/signature-snippets.test.ts).
  { pkg: "php-cli", present: (p) => p.command("php") },
  { pkg: "golang-go", present: (p) => p.command("go") },
];

export function missingPackages(probe: ToolProbe): string[] {
  return TEST_TOOLS.filter((tool) => !tool.present(probe)).map((tool) => tool.pkg);
}

const executable = (file: string) => {
  try {
    accessSync(file, constants.X_OK);
    return true;
  } catch {
    return false;
  }
};

export function systemProbe(searchPath = process.env.PATH ?? ""): ToolProbe {
  return {
    command: (name) => searchPath.split(path.delimiter).some((dir) => dir !== "" && executable(path.join(dir, name))),
    file: executable,
    python: (module) => {
      try {
        execFileSync("/usr/bin/python3", ["-c", `import ${module}`], {
          stdio: "ignore",
        });
        return true;
      } catch {
        return false;
      }
    },
  };
}

export interface ToolsHost {
  probe: ToolProbe;
  /** Root with apt-get: the packages can be installed here, as CI does. */
  canInstall: boolean;
  install(packages: string[]): void;
}

export const systemHost = (): ToolsHost => ({
  probe: systemProbe(),
  canInstall: process.getuid?.() === 0 && systemProbe().command("apt-get"),
  install: (packages) => {
    execFileSync("apt-get", ["update", "-qq"], { stdio: "inherit" });
    execFileSync("apt-get", ["install", "-y", "-qq", ...packages], {
      stdio: "inherit",
      env: { ...process.env, DEBIAN_FRONTEND: "noninteractive" },
    });
  },
});

/** Installs what is missing where it can; otherwise stops the run with one line naming the packages. */
export function ensureTestTools(host: ToolsHost): void {
  const missing = missingPackages(host.probe);
  if (missing.length === 0) return;
  if (host.canInstall) {
    host.install(missing);
    const still = missingPackages(host.probe);
    if (still.length === 0) return;
    throw new MissingTools(`The tests need Debian packages that did not install: ${still.join(" ")}`);
  }
  throw new MissingTools(`The tests need Debian packages this machine lacks; as root: apt-get install ${missing.join(" ")}`);
}

/** The one line the run stops with (global-setup.ts prints it alone, without a stack). */
export class MissingTools extends Error {
  override name = "MissingTools";
}
