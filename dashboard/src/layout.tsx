import type { ComponentChildren } from "preact";
import { createContext } from "preact";
import { useContext } from "preact/hooks";
import { api, type Org } from "./api.js";
import { principal, signOut } from "./auth.js";
import { Link, navigate, to, type Route } from "./router.js";
import { Ext, useAnswer, type Loaded } from "./ui.js";

/** The organization of the page being shown (from the address), with its record once loaded. */
export interface OrgScope {
  id: number;
  org: Loaded<{ org: Org }>;
  reload: () => void;
}

export const OrgContext = createContext<OrgScope | null>(null);

export function useOrg(): OrgScope {
  const scope = useContext(OrgContext);
  if (!scope) throw new Error("useOrg outside an organization's page");
  return scope;
}

const ORG_NAV: { page: Route["page"]; label: string; href: (org: number) => string }[] = [
  { page: "overview", label: "Overview", href: to.org },
  { page: "keys", label: "Keys", href: to.keys },
  { page: "domains", label: "Domains", href: to.domains },
  { page: "scans", label: "Scans", href: to.scans },
  { page: "findings", label: "Findings", href: to.findings },
  { page: "activity", label: "Activity", href: to.activity },
  { page: "content", label: "Content & secrets", href: to.content },
  { page: "siem", label: "SIEM & webhooks", href: to.siem },
  { page: "team", label: "Team", href: to.team },
];

/** Which nav entry a page belongs to (the key's page is under Keys, and so on). */
function section(route: Route): Route["page"] {
  if (route.page === "key") return "keys";
  if (route.page === "scan") return "scans";
  if (route.page === "finding") return "findings";
  return route.page;
}

function who(): string {
  const p = principal();
  if (!p) return "";
  if (p.kind === "operator") return "Operator";
  if (p.kind === "token") return `Token ${p.token?.name ?? ""} (${(p.scopes ?? []).join(" + ") || "read"})`;
  return `${p.member?.name ?? "Member"} (${p.role ?? "member"})`;
}

export function Layout(props: { route: Route; orgId: number | null; children: ComponentChildren }) {
  const p = principal();
  const orgId = props.orgId;
  // Outside an organization nothing is asked (a promise that never settles leaves it "loading", unshown).
  const [org, reload] = useAnswer(() => (orgId === null ? new Promise<never>(() => undefined) : api.org(orgId)), [orgId]);
  const current = section(props.route);
  const orgName = orgId !== null && org.state === "ok" ? org.data.org.name : p?.org && p.org.id === orgId ? p.org.name : null;
  const out = async () => {
    await signOut();
    navigate(to.signin(), { replace: true });
  };
  const scope: OrgScope | null = orgId === null ? null : { id: orgId, org, reload };
  const links = () => [
    ...(orgId !== null
      ? ORG_NAV.map((item) => (
          <Link key={item.page} href={item.href(orgId)} current={item.page === current}>
            {item.label}
          </Link>
        ))
      : []),
    ...(p?.kind === "operator"
      ? [
          <Link key="operator" href={to.operator()} current={current === "operator"} class="operator-link">
            Operator
          </Link>,
        ]
      : []),
  ];
  const here = current === "operator" ? "Operator" : (ORG_NAV.find((item) => item.page === current)?.label ?? "");
  return (
    <div class="app">
      <a class="skip" href="#main">
        Skip to the page
      </a>
      <header class="top">
        <div class="top-row">
          <Link href={to.home()} class="brand">
            Access gateway
          </Link>
          {orgId !== null ? <span class="org-name">{orgName !== null ? <Ext text={orgName} /> : `Organization ${orgId}`}</span> : null}
          <span class="spacer" />
          <span class="who">
            <Ext text={who()} />
          </span>
          <button type="button" class="link-button" onClick={() => void out()}>
            Sign out
          </button>
        </div>
        {orgId !== null || p?.kind === "operator" ? (
          <>
            <nav class="main-nav wide-only" aria-label="Dashboard">
              {links()}
            </nav>
            {/* Narrow screens: the same links behind one disclosure, which names the page you are on. */}
            <details class="menu narrow-only" key={current}>
              <summary>Menu {here !== "" ? <span class="muted-on-dark">· {here}</span> : null}</summary>
              <nav class="main-nav" aria-label="Dashboard">
                {links()}
              </nav>
            </details>
          </>
        ) : null}
      </header>
      <main id="main" class="page">
        <OrgContext.Provider value={scope}>{props.children}</OrgContext.Provider>
      </main>
    </div>
  );
}
