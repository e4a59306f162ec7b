import type { Handler } from "../router.js";
import type { IngressDeps } from "../deps.js";
import { botcheck } from "./botcheck.js";
import { content } from "./content.js";
import { keysJson } from "./keys-json.js";
import { scanRoute } from "./scan.js";
import { secret, secretMethodNotAllowed } from "./secret.js";
import { verify } from "./verify.js";

/** Public endpoints readable from browsers (CORS *). secret.php and the server-only endpoints are not here. */
export const CORS_PATHS = ["/api/v1/verify.php", "/api/v1/botcheck.php", "/api/v1/content.php", "/api/v1/keys.json", "/api/status.php"];

export function registerPublicRoutes(add: (method: string, path: string, handler: Handler<IngressDeps>) => void): void {
  for (const path of ["/api/v1/verify.php", "/api/v1/verify"]) {
    add("GET", path, verify);
    add("POST", path, verify);
  }
  add("GET", "/api/v1/keys.json", keysJson);
  const scan = scanRoute();
  for (const path of ["/api/v1/scan.php", "/api/v1/scan"]) {
    add("GET", path, scan);
    add("POST", path, scan);
  }
  for (const path of ["/api/v1/content.php", "/api/v1/content"]) {
    add("GET", path, content);
    add("POST", path, content);
  }
  for (const path of ["/api/v1/botcheck.php", "/api/v1/botcheck"]) {
    add("GET", path, botcheck);
    add("POST", path, botcheck);
  }
  // POST only: any other method is 405 with `Allow: POST` and no CORS header. OPTIONS never
  // reaches the router (app.ts answers preflights for CORS_PATHS only, and 405 otherwise).
  for (const path of ["/api/v1/secret.php", "/api/v1/secret"]) {
    add("POST", path, secret);
    add("*", path, secretMethodNotAllowed);
  }
}
