import { render } from "preact";
import { useEffect, useState } from "preact/hooks";
import { onSignedOut } from "./api.js";
import { may, principal, resume, type Principal } from "./auth.js";
import { Layout } from "./layout.js";
import { ActivityPage } from "./pages/activity.js";
import { ContentPage } from "./pages/content.js";
import { DomainsPage } from "./pages/domains.js";
import { FindingPage, FindingsPage } from "./pages/findings.js";
import { KeyPage } from "./pages/key.js";
import { KeysPage } from "./pages/keys.js";
import { OperatorPage } from "./pages/operator.js";
import { OverviewPage } from "./pages/overview.js";
import { ScanPage, ScansPage } from "./pages/scans.js";
import { SiemPage } from "./pages/siem.js";
import { SignInPage } from "./pages/signin.js";
import { TeamPage } from "./pages/team.js";
import { BASE, Link, navigate, routeOf, to, usePlace, type Route } from "./router.js";
import { Loading, PageTitle } from "./ui.js";

/**
 * The dashboard (docs/dashboard.md): one Preact app for every path under /dashboard. It
 * finds out who is signed in (auth.ts), then shows the page the address names. A page
 * reads its state from the address, so links and reloads land where they point.
 */

function homeOf(p: Principal): string {
  if (p.kind === "operator") return to.operator();
  return p.org ? to.org(p.org.id) : to.signin();
}

/** Where to go after signing in: the `next` of the address if it is a dashboard path. */
function nextOf(query: URLSearchParams, p: Principal): string {
  const next = query.get("next") ?? "";
  return next.startsWith(`${BASE}/`) && !/^\/dashboard\/(signin|invitation|token)\b/.test(next) && !next.startsWith("//")
    ? next
    : homeOf(p);
}

/**
 * The operator's pages, reached by a member or an organization token (an old link, a typed
 * address): they are the operator's alone (every organization, the public status page), so
 * the page says so and leads back, rather than showing forms the server would refuse.
 */
function NotForRole() {
  const p = principal();
  const as = p?.kind === "token" ? "an organization token" : `a ${p?.role ?? "member"} of your organization`;
  return (
    <>
      <PageTitle sub="Not available to your role.">Operator</PageTitle>
      <section class="card" aria-labelledby="not-for-role">
        <h2 id="not-for-role" class="card-title">
          This page is the operator's
        </h2>
        <p>
          The operator's pages (every organization, the public status page) are for whoever runs the gateway, signed in with its admin
          token. You are signed in as {as}, which may not see them.
        </p>
        {p?.org ? (
          <p>
            <Link href={to.org(p.org.id)}>Go to your organization's overview</Link>
          </p>
        ) : null}
      </section>
    </>
  );
}

function Page(props: { route: Route }) {
  const { route } = props;
  switch (route.page) {
    case "overview":
      return <OverviewPage />;
    case "keys":
      return <KeysPage />;
    case "key":
      return <KeyPage id={route.id} />;
    case "domains":
      return <DomainsPage />;
    case "scans":
      return <ScansPage />;
    case "scan":
      return <ScanPage domain={route.domain} />;
    case "findings":
      return <FindingsPage />;
    case "finding":
      return <FindingPage domain={route.domain} findingKey={route.findingKey} />;
    case "activity":
      return <ActivityPage />;
    case "content":
      return <ContentPage />;
    case "siem":
      return <SiemPage />;
    case "team":
      return <TeamPage />;
    case "operator":
      return may("operate") ? <OperatorPage /> : <NotForRole />;
    default:
      return (
        <>
          <PageTitle>Page not found</PageTitle>
          <p>
            Nothing lives at this address. <a href={BASE}>Go to the start.</a>
          </p>
        </>
      );
  }
}

function App() {
  const place = usePlace();
  const [signedIn, setSignedIn] = useState<"checking" | "in" | "out">("checking");
  const [flash, setFlash] = useState("");
  const route = routeOf(place.path);
  useEffect(() => {
    void resume().then((p) => setSignedIn(p ? "in" : "out"));
    return onSignedOut(() => setSignedIn("out"));
  }, []);
  const p = principal();
  const open = route.page === "signin";
  useEffect(() => {
    if (signedIn === "out" && !open) navigate(to.signin(place.path + location.search), { replace: true });
    if (signedIn === "in" && p && route.page === "home") navigate(homeOf(p), { replace: true });
    if (signedIn === "in" && p && route.page === "signin" && !location.hash) navigate(nextOf(place.query, p), { replace: true });
  }, [signedIn, route.page, place.path]);

  if (signedIn === "checking") return <Loading label="Checking your sign-in…" />;
  if (route.page === "signin" || signedIn === "out" || !p) {
    return (
      <SignInPage
        onSignedIn={(who, message) => {
          setFlash(message ?? "");
          setSignedIn("in");
          navigate(nextOf(place.query, who), { replace: true });
        }}
      />
    );
  }
  if (route.page === "home") return <Loading />;
  // A page outside any organization (the operator's, refused to others) keeps a member's or
  // token's own organization in the navigation, so there is a way on from it.
  const orgId = "org" in route ? route.org : p.kind !== "operator" && p.org ? p.org.id : null;
  return (
    <Layout route={route} orgId={orgId}>
      {flash ? (
        <p class="done" role="status">
          {flash}
        </p>
      ) : null}
      <Page key={place.path} route={route} />
    </Layout>
  );
}

const root = document.getElementById("app");
if (root) {
  root.textContent = "";
  render(<App />, root);
}
