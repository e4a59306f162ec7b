import { Ajv, type ErrorObject, type SchemaObject } from "ajv";
import { INTERACTION_TRAIL, type Interaction } from "./interaction.js";

/**
 * What the page script observed about the visitor (request parameter `signals`).
 * Every field is optional: an absent field is "not observed", never "false".
 * Signals come from the client, so they can only add suspicion, never vouch for it.
 * Field meanings: shared/botcheck/README.md.
 */
export interface Signals {
  webdriver?: boolean;
  automation_globals?: string[];
  user_agent_data_brands?: string[];
  user_agent_data_mobile?: boolean;
  chrome_object?: boolean;
  permissions_inconsistent?: boolean;
  plugins?: number;
  languages?: string[];
  screen?: {
    width?: number;
    height?: number;
    color_depth?: number;
    pixel_ratio?: number;
  };
  touch_points?: number;
  timezone?: string;
  hardware_concurrency?: number;
  device_memory?: number;
  timing?: {
    dom_content_loaded_ms?: number;
    first_interaction_ms?: number;
  };
  pointer_moves?: number;
  keypresses?: number;
}

export const SIGNALS_MAX_STRING = 256;
export const SIGNALS_MAX_ITEMS = 64;
/** Largest accepted count or duration (ms): 2^31 - 1, about 24.8 days. */
export const SIGNALS_MAX_NUMBER = 2_147_483_647;
/** A `signals` sent as a JSON string (form encoding) longer than this is refused unread. */
export const SIGNALS_MAX_JSON_CHARS = 16_384;

const text = { type: "string", maxLength: SIGNALS_MAX_STRING } as const;
const texts = { type: "array", maxItems: SIGNALS_MAX_ITEMS, items: text } as const;
const bool = { type: "boolean" } as const;
const count = { type: "integer", minimum: 0, maximum: SIGNALS_MAX_NUMBER } as const;
const millis = { type: "number", minimum: 0, maximum: SIGNALS_MAX_NUMBER } as const;

export const signalsSchema: SchemaObject = {
  $id: "botcheck/signals",
  type: "object",
  properties: {
    webdriver: bool,
    automation_globals: texts,
    user_agent_data_brands: texts,
    user_agent_data_mobile: bool,
    chrome_object: bool,
    permissions_inconsistent: bool,
    plugins: count,
    languages: texts,
    screen: {
      type: "object",
      properties: {
        width: count,
        height: count,
        color_depth: { type: "integer", minimum: 0, maximum: 64 },
        pixel_ratio: { type: "number", minimum: 0, maximum: 64 },
      },
    },
    touch_points: count,
    timezone: text,
    hardware_concurrency: count,
    device_memory: { type: "number", minimum: 0, maximum: 1_048_576 },
    timing: {
      type: "object",
      properties: {
        dom_content_loaded_ms: millis,
        first_interaction_ms: millis,
      },
    },
    pointer_moves: count,
    keypresses: count,
  },
};

export type SignalsParse = { ok: true; signals: Signals } | { ok: false; errors: string[] };

/** The grant's `interaction` summary (interaction.ts): every field required, nothing else kept. */
export const interactionSchema: SchemaObject = {
  $id: "botcheck/interaction",
  type: "object",
  required: ["input", "presses", "keys", "moves", "trail", "path_px", "span_px", "speed_cv", "max_speed", "contact_px"],
  properties: {
    input: { type: "string", enum: ["mouse", "pen", "touch", "keyboard"] },
    presses: count,
    keys: count,
    moves: count,
    trail: { type: "integer", minimum: 0, maximum: INTERACTION_TRAIL },
    path_px: millis,
    span_px: millis,
    speed_cv: millis,
    max_speed: millis,
    contact_px: millis,
  },
};

/** An `interaction` sent as a JSON string (form encoding) longer than this is set aside unread. */
export const INTERACTION_MAX_JSON_CHARS = 2_048;

/**
 * Like `createSignalsParser`, for the grant's `interaction`: the summary, or undefined when
 * it is absent or breaks the schema (then judged as no evidence at all).
 */
export function createInteractionParser(): (raw: unknown) => Interaction | undefined {
  const ajv = new Ajv({ allErrors: false, removeAdditional: "all", strict: true });
  const validate = ajv.compile<Interaction>(interactionSchema);
  return (raw) => {
    if (typeof raw === "string" && raw.length > INTERACTION_MAX_JSON_CHARS) return undefined;
    const value = decode(raw, false);
    return value !== undefined && validate(value) ? value : undefined;
  };
}

/**
 * Builds the parser once (at start-up, not at import). The parser accepts the decoded
 * request value: an object, or a JSON string of one (form encoding). Unknown fields
 * are dropped, so the result holds only the fields of `Signals`. The input is never
 * modified, unless the caller says it owns it (`owned`: a value parsed for this call
 * alone, which then is not copied: the copy was a tenth of an assessment's cost). A value that breaks the schema is refused whole; the route then assesses
 * as if no signals were sent.
 */
export function createSignalsParser(): (raw: unknown, owned?: boolean) => SignalsParse {
  const ajv = new Ajv({ allErrors: false, removeAdditional: "all", strict: true });
  const validate = ajv.compile<Signals>(signalsSchema);
  return (raw, owned = false) => {
    const value = decode(raw, owned);
    if (value === undefined) return { ok: false, errors: ["signals must be an object"] };
    if (validate(value)) return { ok: true, signals: value };
    return { ok: false, errors: (validate.errors ?? []).map(describe) };
  };
}

/** A private copy of a plain JSON object, or undefined for anything else. */
function decode(raw: unknown, owned: boolean): unknown {
  let value = raw;
  if (typeof value === "string") {
    // A string is parsed into a fresh object: it is private already.
    owned = true;
    if (value.length > SIGNALS_MAX_JSON_CHARS) return undefined;
    try {
      value = JSON.parse(value);
    } catch {
      return undefined;
    }
  }
  if (typeof value !== "object" || value === null || Array.isArray(value)) return undefined;
  if (owned) return value;
  try {
    return structuredClone(value);
  } catch {
    return undefined;
  }
}

function describe(error: ErrorObject): string {
  return `${error.instancePath || "signals"} ${error.message ?? "is invalid"}`;
}
