import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";

/**
 * The protected site of the browser tests: a node:http server on 127.0.0.1 whose pages
 * load botcheck.js from the test gateway under a strict Content-Security-Policy (nonce,
 * no inline styles) and record every CSP violation. The browser reaches it as
 * http://<name>.localhost:<port>/ (a secure context, like the HTTPS pages the rules assume).
 */

export interface PageServer {
  port: number;
  url(host: string, query: Record<string, string>): string;
  close(): Promise<void>;
}

const NONCE = "dGVzdC1ub25jZQ";

export async function startPageServer(gatewayUrl: string, version: string): Promise<PageServer> {
  const server: Server = createServer((req, res) => {
    const url = new URL(req.url ?? "/", "http://x");
    if (url.pathname === "/blocked") {
      res.writeHead(200, { "content-type": "text/html" }).end("<!doctype html><title>blocked</title><p>blocked page</p>");
      return;
    }
    if (url.pathname !== "/page") {
      res.writeHead(404).end();
      return;
    }
    const options = JSON.stringify(Object.fromEntries(url.searchParams));
    res.writeHead(200, {
      "content-type": "text/html; charset=utf-8",
      "content-security-policy": `default-src 'none'; script-src 'nonce-${NONCE}' ${gatewayUrl}; connect-src ${gatewayUrl}; style-src 'nonce-${NONCE}'`,
    });
    res.end(`<!doctype html>
<html lang="${url.searchParams.get("lang") ?? "en"}"><head><meta charset="utf-8"><title>site</title></head>
<body>
<script nonce="${NONCE}">window.__csp = []; document.addEventListener("securitypolicyviolation", function (e) { window.__csp.push(e.violatedDirective + " " + e.blockedURI); });</script>
<p><a href="#top">a link before the widget</a></p>
<div id="widget"></div>
<script src="${gatewayUrl}/botcheck.js?v=${version}" nonce="${NONCE}"></script>
<script nonce="${NONCE}">
window.__result = gateway.botcheck.render(document.getElementById("widget"), ${options}).result;
</script>
</body></html>`);
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const port = (server.address() as AddressInfo).port;
  return {
    port,
    url: (host, query) => `http://${host}:${port}/page?${new URLSearchParams(query)}`,
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}
