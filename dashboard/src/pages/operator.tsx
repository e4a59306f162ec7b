import { useState } from "preact/hooks";
import { api } from "../api.js";
import { Link, navigate, to, usePlace, withQuery } from "../router.js";
import {
  Badge,
  Empty,
  Ext,
  Field,
  Outcome,
  PageTitle,
  Pager,
  Section,
  Show,
  Table,
  Tabs,
  Time,
  plural,
  useAction,
  useAnswer,
  valueOf,
  type InputEvent,
} from "../ui.js";
import { Incidents, MaintenanceTab, Services } from "./operator-status.js";

/**
 * The operator's pages (signed in with ADMIN_TOKEN): every organization, and the public
 * status page's services, incidents and maintenance (operator-status.tsx). `?tab=` says which.
 */

const PLANS = ["free", "starter", "professional", "enterprise"];
const PAGE_SIZE = 50;

function Orgs() {
  const place = usePlace();
  const page = Math.max(1, Number(place.query.get("page") ?? "1") || 1);
  const [list, reload] = useAnswer(() => api.orgs({ page, limit: PAGE_SIZE }), [page]);
  const [name, setName] = useState("");
  const [plan, setPlan] = useState("free");
  const [outcome, run] = useAction();
  const create = async (event: Event) => {
    event.preventDefault();
    const answer = await run(api.createOrg({ name: name.trim(), plan }), (d) => `Organization ${d.org.id} created.`);
    if (answer.ok) {
      setName("");
      reload();
      navigate(to.org(answer.data.org.id));
    }
  };
  return (
    <>
      <Section title="Organizations">
        <Show loaded={list} label="Loading the organizations…">
          {(d) =>
            d.orgs.length === 0 ? (
              <Empty>No organization yet.</Empty>
            ) : (
              <>
                <Table caption="Organizations" head={["Organization", "Plan", "Subscription", "Used this cycle", "Resets"]}>
                  {d.orgs.map((o) => (
                    <tr key={o.id}>
                      <th scope="row" class="break">
                        <Link href={to.org(o.id)}>
                          <Ext text={o.name} />
                        </Link>{" "}
                        <span class="muted">#{o.id}</span>
                      </th>
                      <td>{o.plan}</td>
                      <td>
                        <Badge value={o.subscription === "active" ? "active" : "expired"} label={o.subscription} />
                      </td>
                      <td class="num" data-label="Used this cycle">
                        {o.used.toLocaleString("en")} / {o.allowance === null ? "∞" : o.allowance.toLocaleString("en")}
                      </td>
                      <td data-label="Resets">
                        <Time iso={o.cycle_resets_at} />
                      </td>
                    </tr>
                  ))}
                </Table>
                <Pager page={d.page} hasMore={d.has_more} total={d.total} limit={PAGE_SIZE} href={(n) => withQuery(place, { page: n })} />
              </>
            )
          }
        </Show>
      </Section>
      <Section title="Create an organization">
        <form class="inline-form" onSubmit={(e) => void create(e)}>
          <Field label="Name">
            {(a) => <input {...a} required maxLength={200} value={name} onInput={(e: InputEvent) => setName(valueOf(e))} />}
          </Field>
          <Field label="Plan">
            {(a) => (
              <select {...a} value={plan} onChange={(e: InputEvent) => setPlan(valueOf(e))}>
                {PLANS.map((p) => (
                  <option key={p}>{p}</option>
                ))}
              </select>
            )}
          </Field>
          <button type="submit" class="primary">
            Create
          </button>
        </form>
        <p class="hint">Its first owner is invited from the organization's Team page.</p>
        <Outcome outcome={outcome} />
      </Section>
    </>
  );
}

export function OperatorPage() {
  const place = usePlace();
  const tab = place.query.get("tab") ?? "orgs";
  const [services] = useAnswer(() => api.services(), []);
  const down = services.state === "ok" ? services.data.services.filter((s) => s.last_probe && !s.last_probe.ok).length : 0;
  return (
    <>
      <PageTitle sub={down > 0 ? `${plural(down, "service")} failing its probe.` : "Every organization, and the public status page."}>
        Operator
      </PageTitle>
      <Tabs
        label="Operator sections"
        current={tab}
        tabs={[
          { id: "orgs", label: "Organizations", href: withQuery(place, { tab: null, page: null, edit: null }) },
          { id: "status", label: "Services", href: withQuery(place, { tab: "status", page: null, edit: null }) },
          { id: "incidents", label: "Incidents", href: withQuery(place, { tab: "incidents", page: null, edit: null }) },
          { id: "maintenance", label: "Maintenance", href: withQuery(place, { tab: "maintenance", page: null, edit: null }) },
        ]}
      />
      {tab === "status" ? <Services /> : tab === "incidents" ? <Incidents /> : tab === "maintenance" ? <MaintenanceTab /> : <Orgs />}
    </>
  );
}
