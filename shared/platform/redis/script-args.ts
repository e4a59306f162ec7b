/**
 * Argument layouts of the variadic Lua scripts, named once. loadScript (scripts.ts) writes
 * a script's layout into its source as Lua locals, in place of its `--@layout` line, so the
 * script reads `ARGV[a + G_KEY_VERSION]` where its caller (the batcher) writes the field
 * named `G_KEY_VERSION`: a field added or moved changes both sides at once.
 */

/**
 * verify-batch-n.lua (shared/verify/batch.ts): ARGV is a head of HEAD_FIELDS fields
 * (ARG_*, 1-based), then per group GROUP_FIELDS fields (G_*, 1-based offsets from the
 * group's start), each group followed by its shapes, SHAPE_FIELDS fields each (S_*).
 * The script's header says what each field holds.
 */
export const VERIFY_BATCH_ARGS = {
  ARG_NOW: 1,
  ARG_DAY: 2,
  ARG_MAXLEN: 3,
  ARG_GROUPS: 4,
  ARG_OTHER_LABEL: 5,
  ARG_PENDING_CAP: 6,
  ARG_LABEL_CAP: 7,
  HEAD_FIELDS: 7,
  G_KEY_SNAPSHOT: 1,
  G_ORG_SNAPSHOT: 2,
  G_CYCLE_USED: 3,
  G_INSTALLATIONS: 4,
  G_KEY_VERSION: 5,
  G_ORG_VERSION: 6,
  G_RATE: 7,
  G_PER_SOURCE: 8,
  G_ALLOWANCE: 9,
  G_ORG: 10,
  G_KEY: 11,
  G_ENDPOINT: 12,
  G_CYCLE_START: 13,
  G_LABELS: 14,
  G_PENDING_INSTALLS: 15,
  G_SIGHTINGS: 16,
  G_SHAPES: 17,
  GROUP_FIELDS: 17,
  S_CALLS: 1,
  S_OUTCOME: 2,
  S_COUNTS: 3,
  S_INSTALL: 4,
  S_WINDOW: 5,
  S_SOURCE_WINDOW: 6,
  S_REFUSAL_WINDOW: 7,
  SHAPE_FIELDS: 7,
} as const;

/** Layouts by script file. */
export const SCRIPT_LAYOUTS: Readonly<Record<string, Readonly<Record<string, number>>>> = {
  "verify-batch-n.lua": VERIFY_BATCH_ARGS,
};

type Layout = Readonly<Record<string, number>>;

/** The names of a layout's fields with `prefix`, in argument order (1-based offsets, no gap). */
export function fieldsOf<L extends Layout, P extends string>(layout: L, prefix: P): Extract<keyof L, `${P}${string}`>[] {
  const names = Object.keys(layout).filter((name) => name.startsWith(prefix)) as Extract<keyof L, `${P}${string}`>[];
  names.sort((a, b) => layout[a] - layout[b]);
  names.forEach((name, i) => {
    if (layout[name] !== i + 1) throw new Error(`layout: ${name} is ${layout[name]}, expected ${i + 1}`);
  });
  return names;
}

/** A layout as Lua: one `local NAME = value` line per field. */
export function luaLocals(layout: Layout): string {
  return Object.entries(layout)
    .map(([name, value]) => `local ${name} = ${value}`)
    .join("\n");
}
