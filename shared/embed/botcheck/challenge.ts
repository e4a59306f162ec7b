import { CSS } from "./styles.js";
import type { Strings } from "./i18n.js";
import type { InputKind } from "../../botcheck/interaction.js";

/**
 * The press-and-hold button: pointer (mouse, pen, touch), touch events where Pointer
 * Events are missing, and the keyboard (holding Space or Enter). It measures how long
 * the visitor held and reports it with what pressed (the input kind and the contact size);
 * the caller decides what the service makes of it.
 */

export interface ChallengeView {
  /** Ready for a hold of `holdMs` (a fresh challenge). */
  arm(holdMs: number): void;
  /** A message in the live region; `tone` colours it. */
  say(text: string, tone?: "good" | "bad"): void;
  busy(): void;
  done(): void;
  remove(): void;
}

const SVG = "http://www.w3.org/2000/svg";
const RADIUS = 44;
const CIRCUMFERENCE = 2 * Math.PI * RADIUS;
let counter = 0;

function el<K extends keyof HTMLElementTagNameMap>(tag: K, className: string, text?: string): HTMLElementTagNameMap[K] {
  const node = document.createElement(tag);
  node.className = className;
  if (text !== undefined) node.textContent = text;
  return node;
}

function svg(tag: string, attrs: Record<string, string | number>): SVGElement {
  const node = document.createElementNS(SVG, tag);
  for (const name in attrs) node.setAttribute(name, String(attrs[name]));
  return node;
}

/** Styles without inline CSS: an adopted constructable sheet, else a <style> with the page's nonce. */
function applyStyles(root: ShadowRoot, nonce: string | undefined): void {
  const shadow = root as ShadowRoot & { adoptedStyleSheets?: CSSStyleSheet[] };
  try {
    if (shadow.adoptedStyleSheets !== undefined && "replaceSync" in CSSStyleSheet.prototype) {
      const sheet = new CSSStyleSheet();
      sheet.replaceSync(CSS);
      shadow.adoptedStyleSheets = [sheet];
      return;
    }
  } catch (_) {
    /* fall through to a <style> element */
  }
  const style = document.createElement("style");
  if (nonce) style.setAttribute("nonce", nonce);
  style.textContent = CSS;
  root.appendChild(style);
}

export function createChallenge(
  host: HTMLElement,
  text: Strings,
  lang: string,
  nonce: string | undefined,
  onHeld: (heldMs: number, input: InputKind, contact: number) => void,
): ChallengeView {
  const id = `gwbc${++counter}`;
  const root = host.shadowRoot || host.attachShadow({ mode: "open" });
  while (root.firstChild) root.removeChild(root.firstChild);
  applyStyles(root, nonce);
  const reduced = typeof matchMedia === "function" && matchMedia("(prefers-reduced-motion: reduce)").matches;

  const box = el("div", "box");
  box.setAttribute("role", "group");
  box.setAttribute("lang", lang);
  box.setAttribute("aria-labelledby", `${id}t`);
  const button = el("button", "hold");
  button.type = "button";
  button.setAttribute("aria-describedby", `${id}h ${id}l`);
  const ring = svg("svg", { class: "ring", viewBox: "0 0 96 96", "aria-hidden": "true", focusable: "false" });
  ring.appendChild(svg("circle", { class: "track", cx: 48, cy: 48, r: RADIUS }));
  const bar = svg("circle", {
    class: "bar",
    cx: 48,
    cy: 48,
    r: RADIUS,
    "stroke-dasharray": CIRCUMFERENCE.toFixed(2),
    "stroke-dashoffset": CIRCUMFERENCE.toFixed(2),
  });
  ring.appendChild(bar);
  const label = el("span", "label", text.button);
  button.appendChild(ring);
  button.appendChild(label);
  const words = el("div", "text");
  const title = el("p", "title", text.title);
  title.id = `${id}t`;
  const help = el("p", "help", text.help);
  help.id = `${id}h`;
  const live = el("p", "live");
  live.id = `${id}l`;
  live.setAttribute("role", "status");
  live.setAttribute("aria-live", "polite");
  words.appendChild(title);
  words.appendChild(help);
  words.appendChild(live);
  box.appendChild(button);
  box.appendChild(words);
  root.appendChild(box);

  let holdMs = 0;
  let armed = false;
  let startedAt = -1;
  let frame = 0;
  let heldKey = "";
  let input: InputKind = "mouse";
  let contact = 0;

  const draw = (progress: number) => {
    // Reduced motion: the ring moves in quarters and the label says how far, instead of a sweep.
    const shown = reduced ? Math.floor(progress * 4) / 4 : progress;
    bar.setAttribute("stroke-dashoffset", (CIRCUMFERENCE * (1 - shown)).toFixed(2));
    if (reduced)
      label.textContent = progress > 0 && progress < 1 ? text.percent.replace("{n}", String(Math.round(shown * 100))) : text.button;
  };
  const stop = (): number => {
    if (startedAt < 0) return -1;
    const held = performance.now() - startedAt;
    startedAt = -1;
    heldKey = "";
    cancelAnimationFrame(frame);
    button.classList.remove("active");
    return held;
  };
  const finish = () => {
    const held = stop();
    if (held < 0 || !armed) return;
    armed = false;
    onHeld(Math.round(held), input, contact);
  };
  const tick = () => {
    if (startedAt < 0) return;
    const progress = Math.min(1, (performance.now() - startedAt) / holdMs);
    draw(progress);
    // Full: answer at once, without waiting for the release.
    if (progress >= 1) finish();
    else frame = requestAnimationFrame(tick);
  };
  const start = (kind: InputKind, size: number) => {
    if (!armed || startedAt >= 0) return;
    input = kind;
    contact = size;
    startedAt = performance.now();
    button.classList.add("active");
    view.say(text.holding);
    frame = requestAnimationFrame(tick);
  };

  if (typeof PointerEvent === "function") {
    button.addEventListener("pointerdown", (event) => {
      if (event.button !== 0) return;
      event.preventDefault();
      try {
        button.setPointerCapture(event.pointerId);
      } catch (_) {
        /* capture is a convenience */
      }
      const kind = event.pointerType;
      start(kind === "pen" || kind === "touch" ? kind : "mouse", Math.max(event.width || 0, event.height || 0));
    });
    for (const name of ["pointerup", "pointercancel", "lostpointercapture"]) button.addEventListener(name, finish);
  } else {
    button.addEventListener("touchstart", (event) => {
      event.preventDefault();
      start("touch", 0);
    });
    button.addEventListener("mousedown", () => start("mouse", 0));
    for (const name of ["touchend", "touchcancel", "mouseup", "mouseleave"]) button.addEventListener(name, finish);
  }
  button.addEventListener("contextmenu", (event) => event.preventDefault());
  button.addEventListener("keydown", (event) => {
    if (event.key !== " " && event.key !== "Enter" && event.key !== "Spacebar") return;
    event.preventDefault();
    if (event.repeat || heldKey) return;
    heldKey = event.key;
    start("keyboard", 0);
  });
  button.addEventListener("keyup", (event) => {
    if (event.key === heldKey) {
      event.preventDefault();
      finish();
    }
  });
  button.addEventListener("blur", finish);

  const view: ChallengeView = {
    arm(ms) {
      holdMs = Math.max(1, ms);
      armed = true;
      button.disabled = false;
      button.removeAttribute("aria-disabled");
      box.classList.remove("done");
      label.textContent = text.button;
      draw(0);
    },
    say(message, tone) {
      live.textContent = message;
      live.className = tone ? `live ${tone}` : "live";
    },
    busy() {
      armed = false;
      button.setAttribute("aria-disabled", "true");
      label.textContent = text.verifying;
      view.say(text.verifying);
    },
    done() {
      armed = false;
      draw(1);
      box.classList.add("done");
      button.disabled = true;
      label.textContent = "✓";
      view.say(text.passed, "good");
    },
    remove() {
      stop();
      while (root.firstChild) root.removeChild(root.firstChild);
    },
  };
  return view;
}
