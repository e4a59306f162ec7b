import { isOneOf } from "../../platform/one-of.js";
import type { Indicator } from "../rules.js";
import { escapeXml } from "./escape.js";

/**
 * The SVG status badge (`/status-badge.php?lang=fr`), shields.io-like: a grey label and
 * the state in words on its colour. Text widths are estimated (no font metrics on the
 * server); the estimate errs wide so words never overflow.
 */

export const BADGE_LANGUAGES = ["en", "fr", "de", "es"] as const;
export type BadgeLanguage = (typeof BADGE_LANGUAGES)[number];

type BadgeState = "operational" | "degraded" | "outage" | "maintenance";

const STATE_OF: Readonly<Record<Indicator, BadgeState>> = {
  ok: "operational",
  degraded: "degraded",
  down: "outage",
  maintenance: "maintenance",
};

/** WCAG AA contrast with white text (4.5:1 or better). */
const COLOURS: Readonly<Record<BadgeState, string>> = {
  operational: "#1a7f37",
  degraded: "#9a6700",
  outage: "#cf222e",
  maintenance: "#0969da",
};

const WORDS: Readonly<Record<BadgeLanguage, { label: string; title: string } & Record<BadgeState, string>>> = {
  en: {
    label: "status",
    title: "Service status",
    operational: "operational",
    degraded: "degraded",
    outage: "outage",
    maintenance: "maintenance",
  },
  fr: {
    label: "statut",
    title: "État du service",
    operational: "opérationnel",
    degraded: "dégradé",
    outage: "panne",
    maintenance: "maintenance",
  },
  de: {
    label: "Status",
    title: "Dienststatus",
    operational: "betriebsbereit",
    degraded: "eingeschränkt",
    outage: "Ausfall",
    maintenance: "Wartung",
  },
  es: {
    label: "estado",
    title: "Estado del servicio",
    operational: "operativo",
    degraded: "degradado",
    outage: "caída",
    maintenance: "mantenimiento",
  },
};

/** `fr`, `fr-CA`, `FR` → fr; anything unknown → en. */
export function badgeLanguage(raw: string | undefined | null): BadgeLanguage {
  const base = (raw ?? "").trim().toLowerCase().split(/[-_]/)[0];
  return isOneOf(BADGE_LANGUAGES, base) ? base : "en";
}

function textWidth(text: string): number {
  // ~7 px per character of 11 px Verdana, wider for capitals and m/w.
  let width = 0;
  for (const ch of text) width += /[MWmw]/.test(ch) ? 10 : /[A-Z]/.test(ch) ? 8 : /[iljtf.,:]/.test(ch) ? 4 : 7;
  return width;
}

export function renderBadge(indicator: Indicator, lang: BadgeLanguage): string {
  const words = WORDS[lang];
  const state = STATE_OF[indicator];
  const label = words.label;
  const value = words[state];
  const left = textWidth(label) + 12;
  const right = textWidth(value) + 12;
  const width = left + right;
  const title = `${words.title}: ${value}`;
  return `<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="20" viewBox="0 0 ${width} 20" role="img" aria-label="${escapeXml(title)}" xml:lang="${lang}">
<title>${escapeXml(title)}</title>
<rect width="${left}" height="20" rx="3" fill="#555"/>
<rect x="${left}" width="${right}" height="20" rx="3" fill="${COLOURS[state]}"/>
<rect x="${left}" width="4" height="20" fill="${COLOURS[state]}"/>
<g fill="#fff" font-family="Verdana,DejaVu Sans,Geneva,sans-serif" font-size="11" text-anchor="middle">
<text x="${left / 2}" y="14">${escapeXml(label)}</text>
<text x="${left + right / 2}" y="14">${escapeXml(value)}</text>
</g>
</svg>
`;
}
