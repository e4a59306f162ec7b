import type { Handler } from "../router.js";
import type { IngressDeps } from "../deps.js";

/** Admin resources beyond organizations register here (keys, domains, installations, usage, ...). */
export function registerAdminRoutes(add: (method: string, path: string, handler: Handler<IngressDeps>) => void): void {
  void add;
}
