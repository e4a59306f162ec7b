import type { VerifyResult } from "../../../shared/client/index.js";

/**
 * The HTML of the demo page. Everything it runs carries the page's nonce, so the page
 * is served under a strict Content-Security-Policy: no inline style attribute, no eval,
 * scripts and styles only with the nonce or from the gateway's own origin.
 */

const escape = (text: string) =>
  text.replace(/[&<>"']/g, (c) => ({ "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" })[c] ?? c);

export interface DemoPage {
  nonce: string;
  scriptUrl: string;
  clientKey: string;
  verified: VerifyResult;
  /** Where the page works (the key's lock), shown when the visitor came by another host. */
  goodUrl: string | null;
}

function verifyPanel(result: VerifyResult): string {
  const rows: [string, string][] = [
    ["authorized", String(result.authorized)],
    ["source", result.source],
    ["reason", result.reason],
  ];
  if (result.authorized && result.entitlement) {
    rows.push(["entitlement valid until", new Date(result.entitlement.exp * 1000).toISOString()]);
    rows.push(["entitlement domain", result.entitlement.dom]);
  }
  if (result.authorized && result.source === "service")
    rows.push(["key", `${result.answer.key.name} (${result.answer.key.prefix}…)`], ["latency", `${result.answer.latency_ms} ms`]);
  if (!result.authorized) rows.push(["message", result.message]);
  return rows.map(([k, v]) => `<tr><th>${escape(k)}</th><td>${escape(v)}</td></tr>`).join("");
}

export function demoHtml(page: DemoPage): string {
  const n = escape(page.nonce);
  const wrongHost = page.goodUrl
    ? `<p class="warn">The demo key is locked to <b>demo.localhost</b>: this host would be refused with <code>domain_mismatch</code>.
       Open <a href="${escape(page.goodUrl)}">${escape(page.goodUrl)}</a>.</p>`
    : "";
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>Access gateway demo</title>
<style nonce="${n}">
body{font:16px/1.5 system-ui,sans-serif;max-width:46rem;margin:2rem auto;padding:0 1rem;color:#1d2433}
table{border-collapse:collapse;margin:.5rem 0 1.5rem}th,td{text-align:left;padding:.25rem .75rem;border-bottom:1px solid #e1e5ec}
.warn{background:#fff4ce;padding:.75rem 1rem;border-radius:8px}.protected{background:#e9f7ef;padding:1rem;border-radius:8px}
[hidden]{display:none}code{background:#f1f3f7;padding:0 .25rem;border-radius:4px}
</style>
</head>
<body>
<h1>Access gateway demo</h1>
${wrongHost}
<h2>1. Server side: verify through the client</h2>
<p>While rendering this page the server called <code>verify.php</code> with the demo server key through
<code>shared/client</code>, which checked the HMAC signature and <code>ts</code> and cached the entitlement:</p>
<table id="verify">${verifyPanel(page.verified)}</table>
<h2>2. In the browser: the bot check</h2>
<p>The widget gathers the page signals and asks <code>botcheck.php</code>. A new visitor is challenged; press and hold
(or hold Space/Enter). The pass token is kept in sessionStorage, so a reload skips the challenge.</p>
<div id="widget" data-gateway-botcheck></div>
<p id="status" role="status"></p>
<div id="protected" class="protected" hidden><h3>Protected content</h3><p>You passed the bot check: this part of the page is now shown.</p></div>
<script nonce="${n}">
window.demoPassed = function (r) {
  document.getElementById("protected").hidden = false;
  document.getElementById("status").textContent = r.verified ? "Returning visitor: your token was accepted." : r.token ? "Challenge passed: token stored." : r.enforced ? "Passed." : "Bot protection is off for this key.";
};
window.demoFailed = function (r) { document.getElementById("status").textContent = "Refused: " + r.reason; };
</script>
<script src="${escape(page.scriptUrl)}" nonce="${n}" data-key="${escape(page.clientKey)}" data-on-pass="demoPassed" data-on-fail="demoFailed" async></script>
</body>
</html>
`;
}
