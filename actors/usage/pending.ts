import { recordActivity } from "../../shared/accounts/index.js";
import { insertEvent } from "../../shared/events/index.js";
import { claimPendingNotices, type PendingInstallation } from "../../shared/verify/index.js";
import type { Queryable } from "../../shared/platform/db/pool.js";

/**
 * The owner hears about a pending installation (docs/events.md, "installation.pending"):
 * the first time the counting script records an installation `pending` (its usage event
 * carries install_new), the usage actor, in the transaction that applies the event, claims
 * the installation's notice and writes an `installation.pending` event and a `trust`
 * activity row. The event then travels like any other: the outbox relay puts it on the
 * events stream, where the notifier e-mails the organization's owners and admins and sends
 * each webhook a signed delivery. Never on the verify hot path; once per installation
 * whatever the redeliveries (usage_applied, then the notice's primary key).
 */
export async function announcePendingInstallations(tx: Queryable, pending: readonly PendingInstallation[]): Promise<number> {
  const at = new Map(pending.map((p) => [`${p.keyId}\u0000${p.install}`, p.atMs]));
  const claimed = await claimPendingNotices(tx, pending);
  for (const notice of claimed) {
    const atMs = at.get(`${notice.key_id}\u0000${notice.install}`) ?? 0;
    const domain = notice.domain ?? "";
    await insertEvent(tx, {
      orgId: notice.org_id,
      type: "installation.pending",
      timeMs: atMs,
      domain,
      payload: { install: notice.install, key_id: notice.key_id, key_name: notice.key_name, key_prefix: notice.key_prefix },
    });
    await recordActivity(tx, {
      orgId: notice.org_id,
      atMs,
      who: "system",
      via: "system",
      group: "trust",
      domain: notice.domain,
      action: `Installation ${notice.install} of key "${notice.key_name}" waits for approval`,
      actionCode: "installation.pending",
      detail: { key_id: notice.key_id, install: notice.install },
    });
  }
  return claimed.length;
}
