import type { Handler } from "../router.js";
import type { IngressDeps } from "../deps.js";
import { activity } from "./activity.js";
import { assignmentsRoute } from "./assignments.js";
import { botcheck } from "./botcheck.js";
import { content } from "./content.js";
import { demoRoute } from "./demo.js";
import { embedScriptRoute } from "./embed.js";
import { events } from "./events.js";
import { keysJson } from "./keys-json.js";
import { landing } from "./landing.js";
import { apiDescriptionRoutes } from "./openapi.js";
import { scanRoute } from "./scan.js";
import { secret, secretMethodNotAllowed } from "./secret.js";
import { registerStatusRoutes } from "./status.js";
import { refuse } from "../reply.js";
import type { HttpReply } from "../types.js";
import { verify } from "./verify.js";

/** Public endpoints readable from browsers (CORS *). secret.php and the server-only endpoints are not here. */
export const CORS_PATHS = ["/api/v1/verify.php", "/api/v1/botcheck.php", "/api/v1/content.php", "/api/v1/keys.json", "/api/status.php"];

/**
 * HEAD on an endpoint that judges a key: 405 with `Allow: GET, POST`, judged and charged
 * nothing. The router answers HEAD like GET elsewhere; here that would run the whole chain
 * and charge the allowance for an answer nobody can read (docs/security.md, "Input handling").
 */
export function headRefused(): HttpReply {
  return refuse("method_not_allowed", {}, { allow: "GET, POST" });
}

export function registerPublicRoutes(add: (method: string, path: string, handler: Handler<IngressDeps>) => void): void {
  /**
   * interface.md 1: every endpoint answers GET with a query string or POST, as `name.php`
   * and `name`; each of them judges and charges a key, so HEAD is refused (headRefused).
   */
  const getOrPost = (name: string, handler: Handler<IngressDeps>) => {
    for (const path of [`/api/v1/${name}.php`, `/api/v1/${name}`]) {
      add("GET", path, handler);
      add("POST", path, handler);
      add("HEAD", path, headRefused);
    }
  };
  getOrPost("verify", verify);
  add("GET", "/api/v1/keys.json", keysJson);
  getOrPost("scan", scanRoute());
  getOrPost("assignments", assignmentsRoute());
  getOrPost("activity", activity);
  getOrPost("events", events);
  getOrPost("content", content);
  getOrPost("botcheck", botcheck);
  // POST only: any other method is 405 with `Allow: POST` and no CORS header. OPTIONS never
  // reaches the router (app.ts answers preflights for CORS_PATHS only, and 405 otherwise).
  for (const path of ["/api/v1/secret.php", "/api/v1/secret"]) {
    add("POST", path, secret);
    add("*", path, secretMethodNotAllowed);
  }
  registerStatusRoutes(add);
  // What sites embed (docs/embed.md): the bot-check page script, and the demo page in demo mode.
  add("GET", "/botcheck.js", embedScriptRoute());
  add("GET", "/demo", demoRoute());
  add("GET", "/", landing);
  // The API description (docs/api.md); the admin document is registered by app.ts.
  const described = apiDescriptionRoutes();
  add("GET", "/api/v1/openapi.json", described.publicOpenapi);
  add("GET", "/docs/api", described.reference);
}
