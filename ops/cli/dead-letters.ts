import type { Redis } from "../../shared/platform/redis/client.js";
import { type DeadLetter, listDeadLetters, retryAllDeadLetters, retryDeadLetters } from "../../shared/platform/streams/dead-letters.js";
import type { Keys } from "../../shared/platform/redis/keys.js";
import { table, text } from "./format.js";
import { type CliIo, CliFailure, EXIT, print, printJson, UsageError } from "./io.js";
import { isDeadLetterStream, resolveStream, knownStreams, shortName, sourceOf } from "./redis-scan.js";
import { destinationOfStream, siemPutBack } from "../../shared/events/index.js";

/**
 * `gateway dead-letters list [stream]` and `retry <stream> <dead-id>...|--all`. A dead
 * letter lives in `<stream>:dead`; retrying re-publishes its original payload to the
 * original stream, for the group that failed it, then deletes it (actors/runtime).
 */
interface Options {
  redis: Redis;
  keys: Keys;
  io: CliIo;
  json: boolean;
}

function letterJson(letter: DeadLetter) {
  return {
    stream: letter.stream,
    dead_id: letter.deadId,
    id: letter.id,
    group: letter.group,
    consumer: letter.consumer,
    reason: letter.reason,
    error: letter.error,
    attempts: letter.attempts,
    at: letter.at > 0 ? new Date(letter.at).toISOString() : null,
    data: letter.data,
  };
}

const clip = (value: string, max: number) => (value.length > max ? `${value.slice(0, max - 1)}…` : value);

export async function listCommand(options: Options & { stream?: string; count: number }): Promise<number> {
  const { redis, keys, io, json } = options;
  const sources =
    options.stream !== undefined
      ? [await resolveStream(redis, keys, options.stream)]
      : (await knownStreams(redis, keys)).filter((n) => isDeadLetterStream(keys, n)).map(sourceOf);
  const letters: DeadLetter[] = [];
  for (const source of sources) letters.push(...(await listDeadLetters(redis, keys, source, { count: options.count })));
  if (json) {
    printJson(io, { ok: true, dead_letters: letters.map(letterJson) });
    return EXIT.ok;
  }
  if (letters.length === 0) {
    print(
      io,
      options.stream === undefined
        ? `No dead letters under prefix ${JSON.stringify(keys.prefix)}.`
        : `No dead letters in ${options.stream}.`,
    );
    return EXIT.ok;
  }
  print(
    io,
    table(
      ["STREAM", "DEAD ID", "GROUP", "REASON", "ATTEMPTS", "AT", "ERROR", "DATA"],
      letters.map((l) => [
        text(shortName(keys, l.stream)),
        text(l.deadId),
        text(l.group),
        text(l.reason),
        String(l.attempts),
        l.at > 0 ? new Date(l.at).toISOString() : "-",
        clip(text(l.error), 60),
        clip(text(l.data), 80),
      ]),
    ),
  );
  return EXIT.ok;
}

export async function retryCommand(options: Options & { stream: string | undefined; ids: string[]; all: boolean }): Promise<number> {
  const { redis, keys, io, json } = options;
  if (options.stream === undefined) throw new UsageError("dead-letters retry needs the stream");
  if (options.all === options.ids.length > 0) throw new UsageError("name the dead letter ids to retry, or pass --all (not both)");
  for (const id of options.ids) if (!/^\d+-\d+$/.test(id)) throw new UsageError(`not a stream entry id: ${JSON.stringify(id)}`);
  const stream = await resolveStream(redis, keys, options.stream);
  // A SIEM destination's letters go back through the fan-out's script (as the admin API does).
  const putBack = destinationOfStream(keys, stream) === null ? {} : { putBack: siemPutBack(redis, keys) };
  const retried = options.all
    ? await retryAllDeadLetters(redis, keys, stream, putBack)
    : await retryDeadLetters(redis, keys, stream, options.ids, putBack);
  const done = new Set(retried.map((r) => r.deadId));
  const missing = options.ids.filter((id) => !done.has(id));
  if (json) {
    printJson(io, {
      ok: missing.length === 0,
      stream,
      retried: retried.map((r) => ({ dead_id: r.deadId, new_id: r.newId })),
      not_found: missing,
    });
  } else {
    print(io, `Retried ${retried.length} dead letter${retried.length === 1 ? "" : "s"} of ${shortName(keys, stream)}.`);
    for (const r of retried) print(io, `  ${r.deadId} → ${r.newId}`);
  }
  if (missing.length > 0) {
    if (!json) throw new CliFailure(`no dead letter ${missing.join(", ")} in ${shortName(keys, stream)}`);
    return EXIT.failed;
  }
  return EXIT.ok;
}
