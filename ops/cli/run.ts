import { type Config, ConfigError, loadConfig } from "../../shared/platform/config.js";
import { createRedis, parseClusterUrl } from "../../shared/platform/redis/client.js";
import { createKeys } from "../../shared/platform/redis/keys.js";
import type { Redis } from "../../shared/platform/redis/client.js";
import { adminClient } from "./admin-client.js";
import {
  domainAdd,
  domainVerify,
  installDecision,
  keyCreate,
  keyGet,
  keyRotate,
  keyTransition,
  orgCreate,
  orgGet,
} from "./admin-commands.js";
import { checkOptions, flag, type OptionKind, parseArgs, requiredOption, stringOption } from "./args.js";
import { listCommand, retryCommand } from "./dead-letters.js";
import { terminalSafe } from "./format.js";
import { type CliIo, CliFailure, type Env, EXIT, printError, printJson, UsageError } from "./io.js";
import { resealCommand } from "./secrets-reseal.js";
import type { Command, Runtime } from "./command.js";
import { ACCOUNT_COMMANDS } from "./account-commands.js";
import { FINDINGS_COMMANDS } from "./findings-commands.js";
import { SIEM_COMMANDS } from "./siem-commands.js";
import { STATUS_COMMANDS } from "./status-commands.js";
import { rebuildBySentinel, rebuildNow } from "./snapshots.js";
import { streamsCommand } from "./streams.js";
import { adminTokenCommand } from "./admin-token.js";

/**
 * `gateway <noun> <verb> ...`: the operator's command line (operator-api.md section 3).
 * Admin commands go through the admin API over HTTP (SITE_URL or --url; the bearer is
 * --token, else GATEWAY_TOKEN (an organization token), else ADMIN_TOKEN); streams, dead
 * letters and snapshots talk to Redis directly (REDIS_URL, REDIS_PREFIX). The environment
 * is parsed by loadConfig, like every other entry point.
 */

const KEY_OPTIONS: Record<string, OptionKind> = {
  org: "string",
  name: "string",
  kind: "string",
  domain: "string",
  environment: "string",
  industry: "string",
  scopes: "string",
  "ip-allow": "string",
  "ip-deny": "string",
  "countries-allow": "string",
  "countries-block": "string",
  "rate-per-minute": "string",
  "expires-at": "string",
  trial: "boolean",
  "ip-binding": "boolean",
};

const COMMANDS: Command[] = [
  {
    noun: "org",
    verb: "create",
    uses: "admin",
    synopsis: "org create --name NAME [--plan free|starter|professional|enterprise] [--fix-target-days N] [--subscription active|lapsed]",
    summary: "Create an organization (the account).",
    options: { name: "string", plan: "string", "fix-target-days": "string", subscription: "string" },
    run: (_rt, d) => orgCreate(d.admin()),
  },
  {
    noun: "org",
    verb: "get",
    uses: "admin",
    synopsis: "org get ORG_ID",
    summary: "Show an organization and its usage.",
    options: {},
    run: (_rt, d) => orgGet(d.admin()),
  },
  {
    noun: "key",
    verb: "create",
    uses: "admin",
    synopsis:
      "key create --org ORG_ID --name NAME --kind client|server [--domain DOMAIN] [--environment E] [--scopes a,b]\n" +
      "             [--ip-allow CIDR,...] [--ip-deny CIDR,...] [--countries-allow CC,...] [--countries-block CC,...]\n" +
      "             [--rate-per-minute N] [--expires-at TIME] [--trial] [--ip-binding]",
    summary: "Create a key; the full key is printed once. Client keys need --domain.",
    options: KEY_OPTIONS,
    run: (_rt, d) => keyCreate(d.admin()),
  },
  {
    noun: "key",
    verb: "get",
    uses: "admin",
    synopsis: "key get KEY_ID",
    summary: "Show a key's details.",
    options: {},
    run: (_rt, d) => keyGet(d.admin()),
  },
  {
    noun: "key",
    verb: "suspend",
    uses: "admin",
    synopsis: "key suspend KEY_ID",
    summary: "Pause a key (refused with key_suspended).",
    options: {},
    run: (_rt, d) => keyTransition("suspend")(d.admin()),
  },
  {
    noun: "key",
    verb: "resume",
    uses: "admin",
    synopsis: "key resume KEY_ID",
    summary: "Resume a suspended key.",
    options: {},
    run: (_rt, d) => keyTransition("resume")(d.admin()),
  },
  {
    noun: "key",
    verb: "revoke",
    uses: "admin",
    synopsis: "key revoke KEY_ID",
    summary: "Revoke a key for ever.",
    options: {},
    run: (_rt, d) => keyTransition("revoke")(d.admin()),
  },
  {
    noun: "key",
    verb: "rotate",
    uses: "admin",
    synopsis: "key rotate KEY_ID [--grace-s SECONDS]",
    summary: "Replace a key by a new one (printed once); the old one is revoked, or works SECONDS more (up to 604800).",
    options: { "grace-s": "string" },
    run: (_rt, d) => keyRotate(d.admin()),
  },
  {
    noun: "domain",
    verb: "add",
    uses: "admin",
    synopsis: "domain add --org ORG_ID --domain DOMAIN [--verified]",
    summary: "Add a domain; prints the DNS TXT record that proves ownership (--verified: verified by hand).",
    options: { org: "string", domain: "string", verified: "boolean" },
    run: (_rt, d) => domainAdd(d.admin()),
  },
  {
    noun: "domain",
    verb: "verify",
    uses: "admin",
    synopsis: "domain verify --org ORG_ID --domain DOMAIN",
    summary: "Look the TXT record up now; exit code 1 while it is not found.",
    options: { org: "string", domain: "string" },
    run: (_rt, d) => domainVerify(d.admin()),
  },
  {
    noun: "install",
    verb: "approve",
    uses: "admin",
    synopsis: "install approve KEY_ID INSTALL",
    summary: "Approve an installation of a key.",
    options: {},
    run: (_rt, d) => installDecision("approve")(d.admin()),
  },
  {
    noun: "install",
    verb: "block",
    uses: "admin",
    synopsis: "install block KEY_ID INSTALL",
    summary: "Block an installation of a key.",
    options: {},
    run: (_rt, d) => installDecision("block")(d.admin()),
  },
  {
    noun: "streams",
    verb: null,
    uses: "redis",
    synopsis: "streams [--watch]",
    summary: "Every stream and consumer group: length, dead letters, pending, lag, oldest pending age (--watch: every 2 s).",
    options: { watch: "boolean" },
    run: (rt, d) => streamsCommand({ ...d.redis(), io: rt.io, json: rt.json, watch: flag(rt.parsed, "watch") }),
  },
  {
    noun: "dead-letters",
    verb: "list",
    uses: "redis",
    synopsis: "dead-letters list [STREAM] [--count N]",
    summary: "Dead letters of one stream, or of every stream (at most N per stream, default 100).",
    options: { count: "string" },
    run: (rt, d) => {
      const raw = stringOption(rt.parsed, "count") ?? "100";
      if (!/^[1-9]\d{0,5}$/.test(raw)) throw new UsageError("--count must be a positive integer");
      return listCommand({ ...d.redis(), io: rt.io, json: rt.json, stream: rt.args[0], count: Number(raw) });
    },
  },
  {
    noun: "dead-letters",
    verb: "retry",
    uses: "redis",
    synopsis: "dead-letters retry STREAM (DEAD_ID... | --all)",
    summary: "Put dead letters back on their stream, for the group that failed them.",
    options: { all: "boolean" },
    run: (rt, d) =>
      retryCommand({ ...d.redis(), io: rt.io, json: rt.json, stream: rt.args[0], ids: rt.args.slice(1), all: flag(rt.parsed, "all") }),
  },
  {
    noun: "snapshots",
    verb: "rebuild",
    uses: "config",
    synopsis: "snapshots rebuild [--now]",
    summary: "Make running gateways rebuild the Redis snapshots from PostgreSQL (--now: rebuild from here).",
    options: { now: "boolean" },
    run: async (rt, d) => {
      if (flag(rt.parsed, "now")) return rebuildNow({ config: rt.config(), pgUser: rt.env.PGUSER, io: rt.io, json: rt.json });
      return rebuildBySentinel({ ...d.redis(), io: rt.io, json: rt.json });
    },
  },
  {
    noun: "secrets",
    verb: "reseal",
    uses: "config",
    synopsis: "secrets reseal --old SECRET --new SECRET",
    summary: "Rotate GATEWAY_SECRET: re-encrypt every sealed value (hex or base64 secrets) in one transaction, then make gateways rebuild.",
    options: { old: "string", new: "string" },
    run: (rt, d) =>
      resealCommand({
        config: rt.config(),
        pgUser: rt.env.PGUSER,
        ...d.redis(),
        io: rt.io,
        json: rt.json,
        oldSecret: requiredOption(rt.parsed, "old"),
        newSecret: requiredOption(rt.parsed, "new"),
      }),
  },
  {
    noun: "admin-token",
    verb: null,
    uses: "config",
    synopsis: "admin-token",
    summary: "Print the admin token `npm start` keeps in demo mode (ADMIN_TOKEN unset).",
    options: {},
    run: (rt) => adminTokenCommand({ config: rt.config(), pgUser: rt.env.PGUSER, io: rt.io, json: rt.json }),
  },
  ...ACCOUNT_COMMANDS,
  ...FINDINGS_COMMANDS,
  ...SIEM_COMMANDS,
  ...STATUS_COMMANDS,
];

const SWITCHES = new Set([
  "json",
  "help",
  ...COMMANDS.flatMap((c) =>
    Object.entries(c.options)
      .filter(([, k]) => k === "boolean")
      .map(([n]) => n),
  ),
]);

export function usage(commands: readonly Command[] = COMMANDS): string {
  const rows = commands.map((c) => `  gateway ${c.synopsis}\n      ${c.summary}`);
  return [
    "Usage: gateway <command> [options]",
    "",
    "Commands:",
    ...rows,
    "",
    "Options for every command:",
    "  --json           machine-readable output (one JSON document per line)",
    "  --url URL        site root of the admin API (default: SITE_URL, else http://HOST:PORT)",
    "  --token TOKEN    admin token or organization token (gwt_...; default: GATEWAY_TOKEN, else ADMIN_TOKEN)",
    "  --help           this text",
    "",
    "Environment: SITE_URL, GATEWAY_TOKEN, ADMIN_TOKEN, REDIS_URL, REDIS_PREFIX, DATABASE_URL (see the README).",
    "Exit codes: 0 done, 1 refused or unreachable, 2 wrong command line or configuration.",
    "",
  ].join("\n");
}

function fail(io: CliIo, json: boolean, error: unknown): number {
  if (error instanceof UsageError) {
    printError(io, `error: ${error.message}\n(see: gateway --help)`);
    return EXIT.usage;
  }
  if (error instanceof ConfigError) {
    printError(io, `error: configuration: ${error.message}`);
    return EXIT.usage;
  }
  if (error instanceof CliFailure) {
    if (json) printJson(io, error.body ?? { ok: false, reason: "failed", detail: error.message });
    // The message carries the admin API's words (a refusal's detail, an answer that was not JSON): one line.
    printError(io, `error: ${terminalSafe(error.message)}`);
    return EXIT.failed;
  }
  const message = error instanceof Error ? error.message : String(error);
  if (json) printJson(io, { ok: false, reason: "failed", detail: message });
  printError(io, `error: ${terminalSafe(message)}`);
  return EXIT.failed;
}

/** Where Redis was expected, without the password REDIS_URL may carry. */
function redisAddress(env: Env): string {
  try {
    if (env.REDIS_CLUSTER) return `${env.REDIS_CLUSTER} (cluster)`;
    const cluster = parseClusterUrl(env.REDIS_URL ?? "");
    if (cluster !== null) return `${cluster.nodes.map((n) => `${n.host}:${n.port}`).join(",")} (cluster)`;
    const url = new URL(env.REDIS_URL || "redis://127.0.0.1:6379");
    return `${url.hostname}:${url.port || "6379"}`;
  } catch {
    return "REDIS_URL";
  }
}

/** Runs one command line; returns the exit code. Never calls process.exit, so tests can run it. */
export async function runCli(argv: readonly string[], env: Env, io: CliIo): Promise<number> {
  let json = argv.includes("--json");
  let redis: Redis | null = null;
  try {
    const parsed = parseArgs(argv, SWITCHES);
    json = flag(parsed, "json");
    const [noun, verb, ...rest] = parsed.words;
    if (noun === undefined || noun === "help") {
      const help = noun === "help" || flag(parsed, "help");
      (help ? io.stdout : io.stderr).write(usage());
      return help ? EXIT.ok : EXIT.usage;
    }
    const forNoun = COMMANDS.filter((c) => c.noun === noun);
    const longVerb = rest.length > 0 ? `${verb} ${rest[0]}` : undefined;
    const long = longVerb === undefined ? undefined : forNoun.find((c) => c.verb === longVerb);
    const command = forNoun.find((c) => c.verb === null) ?? long ?? forNoun.find((c) => c.verb === verb);
    if (flag(parsed, "help")) {
      io.stdout.write(usage(forNoun.length > 0 ? forNoun : COMMANDS));
      return forNoun.length > 0 ? EXIT.ok : EXIT.usage;
    }
    if (command === undefined) {
      io.stderr.write(
        `error: unknown command "${[noun, verb].filter(Boolean).join(" ")}"\n\n${usage(forNoun.length > 0 ? forNoun : COMMANDS)}`,
      );
      return EXIT.usage;
    }
    const name = [command.noun, command.verb].filter(Boolean).join(" ");
    checkOptions(parsed, command.options, name);
    const args = command.verb === null ? [verb, ...rest].filter((w): w is string => w !== undefined) : long ? rest.slice(1) : rest;
    if (command.verb === null && args.length > 0) throw new UsageError(`unexpected argument ${JSON.stringify(args[0])} for "${name}"`);

    const url = stringOption(parsed, "url");
    const token = stringOption(parsed, "token");
    let config: Config | null = null;
    const getConfig = () => {
      config ??= loadConfig({
        ...env,
        ...(url !== undefined ? { SITE_URL: url } : {}),
        ...(token !== undefined ? { ADMIN_TOKEN: token } : {}),
      });
      return config;
    };
    const rt: Runtime = { parsed, args, json, io, env, config: getConfig };
    return await command.run(rt, {
      admin: () => {
        const cfg = getConfig();
        // --token wins (it is folded into ADMIN_TOKEN above), then an organization token, then the admin token.
        const bearer = token ?? (env.GATEWAY_TOKEN || null) ?? cfg.adminToken;
        if (!bearer) throw new UsageError("no token: set GATEWAY_TOKEN (an organization token) or ADMIN_TOKEN, or pass --token");
        return { parsed, args, json, io, client: adminClient(cfg.siteUrl, bearer, io.signal) };
      },
      redis: () => {
        const cfg = getConfig();
        redis ??= createRedis(cfg.redisUrl, "gateway:ops");
        // The client retries in the background; a command fails fast instead of hanging.
        redis.on("error", () => {});
        return { redis, keys: createKeys(cfg.redisPrefix) };
      },
    });
  } catch (error) {
    const client = redis as Redis | null;
    if (client !== null && client.status !== "ready" && !(error instanceof CliFailure) && !(error instanceof UsageError)) {
      const reason = error instanceof Error ? error.message : String(error);
      return fail(io, json, new CliFailure(`cannot reach Redis at ${redisAddress(env)} (${reason})`));
    }
    return fail(io, json, error);
  } finally {
    (redis as Redis | null)?.disconnect();
  }
}
