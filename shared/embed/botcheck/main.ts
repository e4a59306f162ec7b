import { judgeInteraction } from "../../botcheck/interaction.js";
import { createApi, Unavailable, type Answer, type Vocabulary } from "./api.js";
import { createChallenge, type ChallengeView } from "./challenge.js";
import { pick } from "./i18n.js";
import { gatherSignals, summarise, watchActivity } from "./signals.js";
import { createSolver, type Solver } from "./solver.js";
import { tokenStore, type StorageKind } from "./storage.js";

/**
 * botcheck.js: the page side of botcheck.php (docs/embed.md). Dependency-free ES2017.
 *
 *   <div data-gateway-botcheck></div>
 *   <script src="{site_url}/botcheck.js?v=…" data-key="ak_live_…" async></script>
 *
 * or `gateway.botcheck.render(element, {key, onPass, onFail})`.
 */

export interface PassResult {
  /** False when bot protection is off for the key (the answer is advisory). */
  enforced: boolean;
  /** A returning visitor's token was accepted. */
  verified: boolean;
  /** A fresh pass token (after a challenge). */
  token?: string;
  /** The service did not answer and `failOpen` let the visitor through. */
  degraded?: boolean;
}

export interface FailResult {
  reason: string;
  blockedUrl?: string;
}

export interface RenderOptions {
  key: string;
  onPass?: (result: PassResult) => void;
  onFail?: (result: FailResult) => void;
  onError?: (error: Error) => void;
  lang?: string;
  storage?: StorageKind;
  cookieName?: string;
  /** CSP nonce for the <style> element (only used where constructable stylesheets are missing). */
  nonce?: string;
  /** botcheck.php URL; defaults to the one beside this script. */
  endpoint?: string;
  /** "assess" (assess/grant, default) or "check" (check/solve). */
  actions?: Vocabulary;
  /** Let the visitor through when the service is unreachable (default true). */
  failOpen?: boolean;
  /** Go to the key's blocked_url on a refusal (default true). */
  followBlockedUrl?: boolean;
}

export interface Widget {
  /** Settles when the visitor passed or was refused. */
  result: Promise<PassResult | FailResult>;
  remove(): void;
}

const RETRY = ["hold_too_short", "expired_challenge", "invalid_challenge"];
const script = document.currentScript as HTMLScriptElement | null;
const scriptSrc = script?.src ? script.src : "";
const activity = watchActivity();

function defaultEndpoint(): string {
  if (!scriptSrc) throw new Error("botcheck: no endpoint (pass options.endpoint)");
  return new URL("api/v1/botcheck.php", scriptSrc).href;
}

function safeUrl(value: string | undefined): string | undefined {
  if (!value) return undefined;
  try {
    const url = new URL(value, location.href);
    return url.protocol === "https:" || url.protocol === "http:" ? url.href : undefined;
  } catch (_) {
    return undefined;
  }
}

export function render(target: HTMLElement | string, options: RenderOptions): Widget {
  const host = typeof target === "string" ? document.querySelector<HTMLElement>(target) : target;
  if (!host) throw new Error("botcheck: no element to render into");
  if (!options?.key) throw new Error("botcheck: options.key is required");
  const { lang, strings } = pick([options.lang, host.closest("[lang]")?.getAttribute("lang"), navigator.language]);
  const api = createApi(options.endpoint || defaultEndpoint(), options.key, options.actions === "check" ? "check" : "assess");
  const store = tokenStore(options.storage || "session", options.key, options.cookieName || "gateway_botcheck");
  const nonce = options.nonce || script?.nonce || undefined;
  let view: ChallengeView | null = null;
  let solver: Solver | null = null;
  // Difficulties of the current challenge; `raise`: the service refused a full hold's proof
  // (a rule newer than this script), so every later proof reaches the higher one.
  let difficulty = 0;
  let withoutEvidence = 0;
  let raise = false;
  let holdMs = 1500;
  let settled = false;
  let resolve: (value: PassResult | FailResult) => void = () => undefined;
  const result = new Promise<PassResult | FailResult>((r) => (resolve = r));

  const pass = (value: PassResult) => {
    if (settled) return;
    settled = true;
    host.setAttribute("data-state", "passed");
    if (value.token) host.setAttribute("data-token", "1");
    resolve(value);
    if (options.onPass) options.onPass(value);
  };
  const fail = (answer: Answer) => {
    if (settled) return;
    settled = true;
    const failure: FailResult = { reason: answer.reason || "refused", blockedUrl: safeUrl(answer.blocked_url) };
    host.setAttribute("data-state", "refused");
    host.setAttribute("data-reason", failure.reason);
    if (view) view.say(strings.refused, "bad");
    resolve(failure);
    if (options.onFail) options.onFail(failure);
    if (failure.blockedUrl && options.followBlockedUrl !== false) location.assign(failure.blockedUrl);
  };
  const fault = (error: unknown) => {
    const err = error instanceof Error ? error : new Error(String(error));
    if (options.onError) options.onError(err);
    if (options.failOpen === false || !(error instanceof Unavailable)) {
      host.setAttribute("data-state", "error");
      if (view) view.say(strings.unavailable, "bad");
      return;
    }
    pass({ enforced: true, verified: false, degraded: true });
  };

  const onAnswer = (answer: Answer, retryText?: string) => {
    if (answer.allow) {
      if (answer.token) store.write(answer.token);
      if (view && answer.token) view.done();
      pass({ enforced: answer.enforced !== false, verified: answer.verified === true, token: answer.token });
      return;
    }
    if (answer.challenge && answer.nonce) {
      const challengeNonce = answer.nonce;
      if (!view) {
        view = createChallenge(host, strings, lang, nonce, (heldMs, input, contact) => {
          if (!view || !solver) return;
          view.busy();
          const interaction = summarise(activity, input, contact);
          const needed = raise || judgeInteraction(interaction) !== "human" ? withoutEvidence : difficulty;
          const work = solver;
          const answering = nonceOf();
          work
            .until(needed)
            .then((proof) => {
              work.stop();
              return api.grant(answering, heldMs, proof, interaction);
            })
            .then((granted) => {
              if (!granted.allow && granted.reason && RETRY.indexOf(granted.reason) >= 0) {
                if (granted.reason === "hold_too_short" && heldMs >= holdMs) raise = true;
                host.setAttribute("data-last-reason", granted.reason);
                // The old challenge is spent: the widget is checking again until the fresh one is armed.
                host.setAttribute("data-state", "checking");
                // One try per nonce: ask for a fresh challenge, then tell the visitor.
                return assess(granted.reason === "hold_too_short" ? strings.tooShort : strings.expired);
              }
              onAnswer(granted);
            })
            .catch(fault);
        });
        host.setAttribute("data-ready", String(performance.now()));
      }
      current = challengeNonce;
      const config = answer.config || {};
      holdMs = config.hold_ms || 1500;
      difficulty = config.difficulty || 0;
      withoutEvidence = Math.max(difficulty, config.difficulty_without_evidence || 0);
      // The work starts with the challenge, towards the higher difficulty: the visitor's
      // reading and holding time is spent on it, and a keyboard hold then waits for nothing.
      if (solver) solver.stop();
      solver = createSolver(challengeNonce, withoutEvidence);
      host.setAttribute("data-state", "challenge");
      view.arm(holdMs);
      if (retryText) view.say(retryText, "bad");
      return;
    }
    fail(answer);
  };
  let current = "";
  const nonceOf = () => current;
  const assess = (retryText?: string) =>
    gatherSignals(activity)
      .then((signals) => api.assess(signals, store.read()))
      .then((answer) => onAnswer(answer, retryText));

  host.setAttribute("data-state", "checking");
  assess().catch(fault);
  return {
    result,
    remove() {
      if (solver) solver.stop();
      if (view) view.remove();
    },
  };
}

/** The <script data-key> form: render into every [data-gateway-botcheck] once the DOM is there. */
function auto(): void {
  if (!script?.getAttribute("data-key")) return;
  const data = (name: string) => script.getAttribute(`data-${name}`) || undefined;
  const run = () => {
    const targets = document.querySelectorAll<HTMLElement>(data("target") || "[data-gateway-botcheck]");
    const call = (name: string | undefined, value: unknown) => {
      const fn = name ? (window as unknown as Record<string, unknown>)[name] : undefined;
      if (typeof fn === "function") fn(value);
    };
    for (let i = 0; i < targets.length; i++) {
      render(targets[i], {
        key: data("key") as string,
        lang: data("lang"),
        storage: data("storage") as StorageKind | undefined,
        cookieName: data("cookie"),
        nonce: data("nonce"),
        endpoint: data("endpoint"),
        actions: data("actions") as Vocabulary | undefined,
        failOpen: data("fail-open") !== "false",
        followBlockedUrl: data("follow-blocked") !== "false",
        onPass: (r) => call(data("on-pass"), r),
        onFail: (r) => call(data("on-fail"), r),
        onError: (e) => call(data("on-error"), e),
      });
    }
  };
  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", run);
  else run();
}

const w = window as unknown as { gateway?: Record<string, unknown> };
w.gateway = w.gateway || {};
w.gateway.botcheck = { render, version: "__VERSION__" };
auto();
