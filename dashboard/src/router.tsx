import type { ComponentChildren, JSX } from "preact";
import { useEffect, useState } from "preact/hooks";

/**
 * State lives in the address: the path says which page, the query its filters, tab and
 * page number. So every page can be linked, reloaded and gone back to. Pages change the
 * query with `setQuery` (history entry replaced for typing, pushed for a choice).
 */

export const BASE = "/dashboard";

export interface Place {
  path: string;
  query: URLSearchParams;
}

function current(): Place {
  return { path: location.pathname.replace(/\/+$/, "") || BASE, query: new URLSearchParams(location.search) };
}

const CHANGED = "gw:navigate";

// Whether the page changed inside the app since it loaded (headings take focus only then).
let moved = false;

export function navigatedInApp(): boolean {
  return moved;
}

export function navigate(href: string, options: { replace?: boolean } = {}): void {
  if (href === location.pathname + location.search) return;
  moved = true;
  if (options.replace) history.replaceState(null, "", href);
  else history.pushState(null, "", href);
  window.dispatchEvent(new Event(CHANGED));
}

/** The query with `patch` applied (null or "" removes a parameter). */
export function withQuery(place: Place, patch: Record<string, string | number | null | undefined>): string {
  const query = new URLSearchParams(place.query);
  for (const [name, value] of Object.entries(patch)) {
    if (value === null || value === undefined || value === "") query.delete(name);
    else query.set(name, String(value));
  }
  const text = query.toString();
  return `${place.path}${text ? `?${text}` : ""}`;
}

export function setQuery(patch: Record<string, string | number | null | undefined>, options: { replace?: boolean } = {}): void {
  navigate(withQuery(current(), patch), options);
}

export function usePlace(): Place {
  const [place, setPlace] = useState(current);
  useEffect(() => {
    const update = () => {
      moved = true;
      setPlace(current());
    };
    window.addEventListener("popstate", update);
    window.addEventListener(CHANGED, update);
    return () => {
      window.removeEventListener("popstate", update);
      window.removeEventListener(CHANGED, update);
    };
  }, []);
  return place;
}

/** A link that changes page without reloading (a modified click opens a new tab as usual). */
export function Link(
  props: { href: string; class?: string; children: ComponentChildren; current?: boolean } & Omit<
    JSX.AnchorHTMLAttributes<HTMLAnchorElement>,
    "href" | "class"
  >,
) {
  const { href, current: isCurrent, children, ...rest } = props;
  const onClick = (event: MouseEvent) => {
    if (event.defaultPrevented || event.button !== 0 || event.metaKey || event.ctrlKey || event.shiftKey || event.altKey) return;
    event.preventDefault();
    navigate(href);
  };
  return (
    <a {...rest} href={href} onClick={onClick} aria-current={isCurrent ? "page" : undefined}>
      {children}
    </a>
  );
}

/** The dashboard's addresses, built in one place. */
export const to = {
  // The token sign-in; members sign in on the plain pages /dashboard/signin and /dashboard/invitation.
  signin: (next?: string) => `${BASE}/token${next ? `?next=${encodeURIComponent(next)}` : ""}`,
  home: () => BASE,
  org: (org: number) => `${BASE}/orgs/${org}`,
  keys: (org: number) => `${BASE}/orgs/${org}/keys`,
  key: (org: number, id: number, tab?: string) => `${BASE}/orgs/${org}/keys/${id}${tab ? `?tab=${tab}` : ""}`,
  domains: (org: number) => `${BASE}/orgs/${org}/domains`,
  scans: (org: number) => `${BASE}/orgs/${org}/scans`,
  scan: (org: number, domain: string) => `${BASE}/orgs/${org}/scans/${encodeURIComponent(domain)}`,
  findings: (org: number) => `${BASE}/orgs/${org}/findings`,
  finding: (org: number, domain: string, key: string) =>
    `${BASE}/orgs/${org}/findings/${encodeURIComponent(domain)}/${encodeURIComponent(key)}`,
  activity: (org: number) => `${BASE}/orgs/${org}/activity`,
  content: (org: number) => `${BASE}/orgs/${org}/content`,
  siem: (org: number) => `${BASE}/orgs/${org}/siem`,
  team: (org: number) => `${BASE}/orgs/${org}/team`,
  operator: (tab?: string) => `${BASE}/operator${tab ? `?tab=${tab}` : ""}`,
};

export type Route =
  | { page: "signin" }
  | { page: "home" }
  | { page: "operator" }
  | { page: "overview" | "keys" | "domains" | "scans" | "findings" | "activity" | "content" | "siem" | "team"; org: number }
  | { page: "key"; org: number; id: number }
  | { page: "scan"; org: number; domain: string }
  | { page: "finding"; org: number; domain: string; findingKey: string }
  | { page: "missing" };

const ORG_PAGES = ["keys", "domains", "scans", "findings", "activity", "content", "siem", "team"] as const;

function decode(part: string): string | null {
  try {
    return decodeURIComponent(part);
  } catch {
    return null;
  }
}

export function routeOf(path: string): Route {
  if (path === BASE) return { page: "home" };
  if (!path.startsWith(`${BASE}/`)) return { page: "missing" };
  const parts = path.slice(BASE.length + 1).split("/");
  if (parts.length === 1 && parts[0] === "token") return { page: "signin" };
  if (parts.length === 1 && parts[0] === "operator") return { page: "operator" };
  if (parts[0] !== "orgs" || !/^[1-9]\d{0,15}$/.test(parts[1] ?? "")) return { page: "missing" };
  const org = Number(parts[1]);
  if (parts.length === 2) return { page: "overview", org };
  const section = parts[2];
  if (parts.length === 3 && (ORG_PAGES as readonly string[]).includes(section)) return { page: section as (typeof ORG_PAGES)[number], org };
  if (parts.length === 4 && section === "keys" && /^[1-9]\d{0,15}$/.test(parts[3])) return { page: "key", org, id: Number(parts[3]) };
  if (parts.length === 4 && section === "scans") {
    const domain = decode(parts[3]);
    if (domain) return { page: "scan", org, domain };
  }
  if (parts.length === 5 && section === "findings") {
    const domain = decode(parts[3]);
    const findingKey = decode(parts[4]);
    if (domain && findingKey) return { page: "finding", org, domain, findingKey };
  }
  return { page: "missing" };
}
