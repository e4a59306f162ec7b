import { transaction, type Pool } from "../../shared/platform/db/pool.js";
import { ownersAndAdmins } from "../../shared/verify/index.js";
import { claimMail, enqueueDeliveries, type EventMessage, isEventOf, isFindingEvent } from "../../shared/events/index.js";
import type { Helpers } from "../runtime/index.js";
import { isPermanentMailFailure, type Mailer } from "../../shared/platform/mail.js";
import { mailOf, pendingInstallationMail, recipientsOf } from "./messages.js";

/**
 * One event: its webhook deliveries are recorded (one row per webhook, keyed by event and
 * webhook, so a duplicated stream entry adds nothing) and handed to the delivery loop;
 * then each e-mail is sent inside a transaction that first records (event, recipient):
 * a duplicate finds the row and sends nothing; a failed send rolls the row back and the
 * event is retried by the runtime. A crash between the SMTP server's acceptance and COMMIT
 * sends that e-mail again (at least once). An e-mail the relay refuses for good (a 5xx to
 * the recipient or the message, an address that is not a plain mailbox) keeps its row and
 * is logged: retrying could only fail again, and would hold one of the actor's slots through
 * minutes of backoff, every organization's e-mail and webhooks waiting behind it.
 */
export function notifierHandler(mailer: Mailer, kickDeliveries: () => void) {
  return async ({ org_id: orgId, event }: EventMessage, helpers: Helpers<Pool>): Promise<void> => {
    const added = await enqueueDeliveries(helpers.db, {
      orgId,
      eventId: event.id,
      eventType: event.type,
      nowMs: helpers.clock.now(),
      bodyFor: (deliveryId) => JSON.stringify({ delivery_id: deliveryId, event }),
    });
    if (added > 0) kickDeliveries();
    // A pending installation is the organization's business: its owners and admins are told.
    const mails = isEventOf(event, "installation.pending")
      ? (await ownersAndAdmins(helpers.db, orgId)).map((to) => ({ to, mail: pendingInstallationMail(event, to) }))
      : isFindingEvent(event)
        ? recipientsOf(event).map((to) => ({ to, mail: mailOf(event, to) }))
        : [];
    for (const { to: recipient, mail } of mails) {
      await transaction(helpers.db, async (tx) => {
        if (!(await claimMail(tx, event.id, recipient.email.toLowerCase(), helpers.clock.now()))) return;
        try {
          await mailer.send(mail);
        } catch (error) {
          if (!isPermanentMailFailure(error)) throw error;
          helpers.logger.warn(
            { err: error, orgId, event: event.id, to: recipient.email },
            "e-mail refused for good by the SMTP relay (or not a plain address): not retried",
          );
        }
      });
    }
  };
}
