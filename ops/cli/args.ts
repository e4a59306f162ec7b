import { UsageError } from "./io.js";

/**
 * The argument grammar: `<noun> [verb] [positionals...] [--flag value | --flag=value | --switch]`.
 * Which flags take a value and which are switches is declared per command, so a typo
 * (`--nmae`) is refused instead of silently ignored.
 */
export type OptionKind = "string" | "boolean";

export interface Parsed {
  words: string[];
  options: Map<string, string | true>;
}

/** Flags every command accepts. */
export const GLOBAL_OPTIONS: Record<string, OptionKind> = { url: "string", token: "string", json: "boolean", help: "boolean" };

/** Splits argv without knowing the command yet: a flag followed by a non-flag word takes it as value unless declared a switch. */
export function parseArgs(argv: readonly string[], switches: ReadonlySet<string>): Parsed {
  const words: string[] = [];
  const options = new Map<string, string | true>();
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i];
    if (arg === "--") {
      words.push(...argv.slice(i + 1));
      break;
    }
    if (arg === "-h") {
      options.set("help", true);
      continue;
    }
    if (!arg.startsWith("--") || arg === "--") {
      words.push(arg);
      continue;
    }
    const eq = arg.indexOf("=");
    const name = arg.slice(2, eq === -1 ? undefined : eq);
    if (name === "") throw new UsageError(`malformed option ${JSON.stringify(arg)}`);
    if (eq !== -1) {
      options.set(name, arg.slice(eq + 1));
    } else if (switches.has(name)) {
      options.set(name, true);
    } else if (i + 1 < argv.length && !argv[i + 1].startsWith("--")) {
      options.set(name, argv[++i]);
    } else {
      options.set(name, true);
    }
  }
  return { words, options };
}

/** Checks the options against what the command declares. */
export function checkOptions(parsed: Parsed, declared: Record<string, OptionKind>, command: string): void {
  const all = { ...GLOBAL_OPTIONS, ...declared };
  for (const [name, value] of parsed.options) {
    const kind = all[name];
    if (kind === undefined) throw new UsageError(`unknown option --${name} for "${command}"`);
    if (kind === "string" && value === true) throw new UsageError(`--${name} needs a value`);
    if (kind === "boolean" && value !== true) throw new UsageError(`--${name} takes no value`);
  }
}

export function stringOption(parsed: Parsed, name: string): string | undefined {
  const value = parsed.options.get(name);
  return typeof value === "string" ? value : undefined;
}

export function requiredOption(parsed: Parsed, name: string): string {
  const value = stringOption(parsed, name);
  if (value === undefined || value === "") throw new UsageError(`--${name} is required`);
  return value;
}

export function flag(parsed: Parsed, name: string): boolean {
  return parsed.options.get(name) === true;
}

/** A positive integer id (an organization or a key). */
export function idArgument(value: string | undefined, what: string): number {
  if (value === undefined) throw new UsageError(`${what} is required`);
  if (!/^[1-9]\d{0,15}$/.test(value)) throw new UsageError(`${what} must be a positive integer, got ${JSON.stringify(value)}`);
  return Number(value);
}

/** A comma-separated list (`--ip-allow 10.0.0.0/8,192.0.2.1`); empty items are dropped. */
export function listOption(parsed: Parsed, name: string): string[] | undefined {
  const value = stringOption(parsed, name);
  return value === undefined
    ? undefined
    : value
        .split(",")
        .map((s) => s.trim())
        .filter(Boolean);
}
