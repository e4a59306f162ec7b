import type { Config } from "../../shared/platform/config.js";
import type { Redis } from "../../shared/platform/redis/client.js";
import type { Keys } from "../../shared/platform/redis/keys.js";
import type { AdminContext } from "./admin-commands.js";
import type { OptionKind, Parsed } from "./args.js";
import type { CliIo, Env } from "./io.js";

/** What one command line gives a command: its options, its positional words, where to write. */
export interface Runtime {
  parsed: Parsed;
  args: string[];
  json: boolean;
  io: CliIo;
  env: Env;
  config(): Config;
}

export interface CommandDeps {
  admin: () => AdminContext;
  redis: () => { redis: Redis; keys: Keys };
}

/**
 * One command: `gateway <noun> [verb] ...`. A verb may be two words (`status incident
 * create`); the dispatcher tries the longer verb first.
 */
export interface Command {
  noun: string;
  verb: string | null;
  synopsis: string;
  summary: string;
  options: Record<string, OptionKind>;
  uses: "admin" | "redis" | "config";
  run(rt: Runtime, deps: CommandDeps): Promise<number>;
}

/** A command that drives the admin API and nothing else. */
export function adminCommand(
  noun: string,
  verb: string,
  synopsis: string,
  summary: string,
  options: Record<string, OptionKind>,
  run: (c: AdminContext) => Promise<number>,
): Command {
  return { noun, verb, synopsis, summary, options, uses: "admin", run: (_rt, d) => run(d.admin()) };
}
