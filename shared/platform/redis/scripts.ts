import { createHash } from "node:crypto";
import { readFileSync } from "node:fs";
import type { Redis } from "./client.js";
import { sourcePath } from "../paths.js";
import { luaLocals, SCRIPT_LAYOUTS } from "./script-args.js";

/**
 * Lua scripts live as files in shared/redis/lua, named `<name>-<numKeys>.lua`, or
 * `<name>-n.lua` for a variadic script whose key count depends on its arguments (its
 * header says how). Each file opens with a comment listing KEYS, ARGV and the returns.
 * A script runs by EVALSHA; after a Redis restart (NOSCRIPT) it is sent once more in
 * full with EVAL, which also caches it again. A script with an argument layout
 * (script-args.ts) gets it as Lua locals in place of its `--@layout` line.
 */

export const LUA_DIR = sourcePath("shared", "platform", "redis", "lua");

export interface LuaScript {
  readonly name: string;
  /** Fixed number of keys, or null for a variadic script. */
  readonly numKeys: number | null;
  readonly source: string;
  readonly sha: string;
}

export function loadScript(file: string, dir = LUA_DIR): LuaScript {
  const match = /^([a-z0-9-]+?)-(\d+|n)\.lua$/.exec(file);
  if (!match) throw new Error(`Lua script ${file}: name it <name>-<numKeys>.lua or <name>-n.lua`);
  const layout = SCRIPT_LAYOUTS[file];
  let source = readFileSync(`${dir}/${file}`, "utf8");
  if (layout !== undefined) {
    if (!/^--@layout$/m.test(source)) throw new Error(`Lua script ${file}: its argument layout goes where a --@layout line stands`);
    source = source.replace(/^--@layout$/m, luaLocals(layout));
  }
  return {
    name: match[1],
    numKeys: match[2] === "n" ? null : Number(match[2]),
    source,
    sha: createHash("sha1").update(source).digest("hex"),
  };
}

function isNoScript(error: unknown): boolean {
  return error instanceof Error && error.message.startsWith("NOSCRIPT");
}

/** Runs a script; `keys` must be exactly numKeys long for a fixed-arity script. */
export async function runScript(
  redis: Redis,
  script: LuaScript,
  keys: readonly string[],
  args: readonly (string | number)[],
): Promise<unknown> {
  if (script.numKeys !== null && keys.length !== script.numKeys) {
    throw new Error(`${script.name}: expected ${script.numKeys} keys, got ${keys.length}`);
  }
  try {
    return await redis.evalsha(script.sha, keys.length, ...keys, ...args);
  } catch (error) {
    if (!isNoScript(error)) throw error;
    return redis.eval(script.source, keys.length, ...keys, ...args);
  }
}
