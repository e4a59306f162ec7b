/** The mailer lives in shared/ (the ingress sends invitations and sign-in links too). */
export { createMailer, MAIL_FROM, type Mail, type Mailer } from "../../shared/platform/mail.js";
