import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { ensureTestTools, MissingTools, missingPackages, systemProbe, TEST_TOOLS, type ToolProbe, type ToolsHost } from "./test-tools.js";

const nothing: ToolProbe = {
  command: () => false,
  file: () => false,
  python: () => false,
};
const everything: ToolProbe = {
  command: () => true,
  file: () => true,
  python: () => true,
};
const ALL = TEST_TOOLS.map((t) => t.pkg);

describe("the test tools check (global setup)", () => {
  it("names every package on a machine without them, nothing on one with them", () => {
    expect(missingPackages(nothing)).toEqual([
      "prometheus",
      "chromium",
      "nginx-light",
      "knot",
      "unbound",
      "ldnsutils",
      "rsyslog",
      "python3-feedparser",
      "php-cli",
      "golang-go",
    ]);
    expect(missingPackages(everything)).toEqual([]);
  });

  it("looks commands up on PATH: an empty PATH finds none of them", () => {
    const empty = mkdtempSync(path.join(tmpdir(), "no-tools-"));
    const probe = {
      ...systemProbe(empty),
      file: () => false,
      python: () => false,
    };
    expect(missingPackages(probe)).toEqual(ALL);
  });

  it("without root and apt, stops with one line naming the packages", () => {
    const host: ToolsHost = {
      probe: {
        ...everything,
        command: (n) => n !== "nginx" && n !== "knotd",
        file: (f) => f !== "/usr/sbin/nginx",
      },
      canInstall: false,
      install: () => expect.fail("must not install"),
    };
    let message = "";
    try {
      ensureTestTools(host);
    } catch (error) {
      expect(error).toBeInstanceOf(MissingTools);
      message = (error as Error).message;
    }
    expect(message).toBe("The tests need Debian packages this machine lacks; as root: apt-get install nginx-light knot");
    expect(message).not.toContain("\n");
  });

  it("as root with apt, installs the missing packages in one go, as .ci/run does", () => {
    const installed = new Set<string>();
    const calls: string[][] = [];
    const probe: ToolProbe = {
      command: (n) => n !== "unbound" || installed.has("unbound"),
      file: () => true,
      python: () => installed.has("python3-feedparser"),
    };
    ensureTestTools({
      probe,
      canInstall: true,
      install: (pkgs) => {
        calls.push(pkgs);
        for (const p of pkgs) installed.add(p);
      },
    });
    expect(calls).toEqual([["unbound", "python3-feedparser"]]);
  });

  it("this machine has every tool (the global setup installed them or stopped the run)", () => {
    expect(missingPackages(systemProbe())).toEqual([]);
  });
});
