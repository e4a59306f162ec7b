import { useState } from "preact/hooks";
import { api, type KeyDetails } from "../api.js";
import { may } from "../auth.js";
import type { Answer } from "../http.js";
import { useOrg } from "../layout.js";
import { Link, to, usePlace, withQuery } from "../router.js";
import { Badge, Confirm, Ext, Field, Outcome, PageTitle, Show, Tabs, Time, useAction, useAnswer, valueOf, type InputEvent } from "../ui.js";
import { KeySettings } from "./key-settings.js";
import { KeyInstallations, KeyIntegration, KeyUsage } from "./key-tabs.js";
import { ShownOnce, UseForSecurityPages } from "./keys.js";

/**
 * The key's page (interface.md "on the key's page"; operator-api.md "Keys"): its state and
 * the actions on it, then four tabs in the address (`?tab=`): settings, installations,
 * usage, integration.
 */

const GRACES: { label: string; seconds: number }[] = [
  { label: "none: the old key stops now", seconds: 0 },
  { label: "1 hour", seconds: 3600 },
  { label: "24 hours", seconds: 86_400 },
  { label: "7 days", seconds: 604_800 },
];

function Actions(props: {
  details: KeyDetails;
  onChanged: (details: KeyDetails) => void;
  onRotated: (fresh: { key: string; details: KeyDetails }) => void;
}) {
  const { details } = props;
  const [outcome, run] = useAction();
  const [grace, setGrace] = useState(0);
  const act = async (action: "suspend" | "resume" | "revoke", words: string) => {
    const answer = await run(api.keyAction(details.id, action), words);
    if (answer.ok) props.onChanged(answer.data.details);
  };
  const rotate = async () => {
    const answer: Answer<{ key: string; details: KeyDetails }> = await run(
      api.rotateKey(details.id, grace),
      "Key rotated: the new key is below.",
    );
    if (answer.ok) props.onRotated(answer.data);
  };
  if (!may("manage") || details.status === "revoked") return <Outcome outcome={outcome} />;
  return (
    <div class="key-actions">
      <div class="actions">
        {details.status === "suspended" ? (
          <button type="button" onClick={() => void act("resume", "Key resumed: it answers again from the next call.")}>
            Resume
          </button>
        ) : (
          <Confirm
            label="Suspend"
            title={`Suspend "${details.name}"?`}
            confirm="Suspend the key"
            onConfirm={() => act("suspend", "Key suspended: calls are refused key_suspended (not charged) until it is resumed.")}
          >
            <p>
              Every call with this key is refused <code>key_suspended</code> until you resume it. Refused calls are not charged.
            </p>
          </Confirm>
        )}
        <Confirm label="Rotate" title={`Rotate "${details.name}"?`} confirm="Rotate the key" onConfirm={rotate}>
          <p>
            A new key with the same settings and installations is made and shown once. The old one is refused <code>invalid_key</code> after
            the grace period.
          </p>
          <Field label="Grace period of the old key">
            {(a) => (
              <select {...a} value={String(grace)} onChange={(e: InputEvent) => setGrace(Number(valueOf(e)))}>
                {GRACES.map((g) => (
                  <option key={g.seconds} value={String(g.seconds)}>
                    {g.label}
                  </option>
                ))}
              </select>
            )}
          </Field>
        </Confirm>
        <Confirm
          label="Revoke"
          danger
          title={`Revoke "${details.name}" for ever?`}
          confirm="Revoke the key"
          onConfirm={() => act("revoke", "Key revoked: it is refused invalid_key from now on, for ever.")}
        >
          <p>
            A revoked key never comes back: every call with it is refused <code>invalid_key</code> from now on. Sites using it stop working
            until they get a new key.
          </p>
        </Confirm>
      </div>
      <Outcome outcome={outcome} />
    </div>
  );
}

export function KeyPage(props: { id: number }) {
  const { id: org } = useOrg();
  const place = usePlace();
  const tab = place.query.get("tab") ?? "settings";
  const [key, reload] = useAnswer(() => api.key(props.id), [props.id]);
  const [override, setOverride] = useState<KeyDetails | null>(null);
  const [rotated, setRotated] = useState<{ key: string; details: KeyDetails } | null>(null);
  return (
    <Show loaded={key} label="Loading the key…">
      {(data) => {
        const details = override && override.id === data.details.id ? override : data.details;
        return (
          <>
            <p class="crumbs">
              <Link href={to.keys(org)}>Keys</Link> /
            </p>
            <PageTitle
              sub={
                <>
                  <Badge value={details.status} /> {details.kind} key <span class="mono">{details.prefix}…</span>
                  {details.domain ? (
                    <>
                      {" "}
                      locked to <Ext text={details.domain} />
                    </>
                  ) : null}
                  {" · "}
                  {details.environment} · ends <Time iso={details.expires_at} empty="never" />
                </>
              }
            >
              <Ext text={details.name} />
            </PageTitle>
            <Actions
              details={details}
              onChanged={(d) => {
                setOverride(d);
                reload();
              }}
              onRotated={(fresh) => {
                setRotated(fresh);
                reload();
              }}
            />
            {rotated ? (
              <ShownOnce label={`The new key replacing "${details.name}"`} value={rotated.key}>
                <p>
                  <Link href={to.key(org, rotated.details.id)}>Open the new key's page</Link> (the new key has its own id).
                </p>
                <UseForSecurityPages fullKey={rotated.key} details={rotated.details} />
              </ShownOnce>
            ) : null}
            <Tabs
              label="The key's sections"
              current={tab}
              tabs={[
                { id: "settings", label: "Settings", href: withQuery(place, { tab: null, page: null }) },
                { id: "installations", label: "Installations", href: withQuery(place, { tab: "installations", page: null }) },
                { id: "usage", label: "Usage", href: withQuery(place, { tab: "usage", page: null }) },
                { id: "integrate", label: "Integration", href: withQuery(place, { tab: "integrate", page: null }) },
              ]}
            />
            {tab === "installations" ? (
              <KeyInstallations id={details.id} />
            ) : tab === "usage" ? (
              <KeyUsage id={details.id} />
            ) : tab === "integrate" ? (
              <KeyIntegration details={details} />
            ) : (
              <KeySettings
                details={details}
                onSaved={(d) => {
                  setOverride(d);
                }}
              />
            )}
          </>
        );
      }}
    </Show>
  );
}
