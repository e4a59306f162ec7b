/** The verify client: docs/client.md. */
export {
  createVerifyClient,
  hostOfDomain,
  CLIENT_NAME,
  CLIENT_VERSION,
  type ClientOptions,
  type VerifyClient,
  type VerifyParams,
} from "./client.js";
export type { ClientReason, VerifyAnswer, VerifyResult } from "./answer.js";
export { memoryStore, webStorageStore, type CacheStore } from "./store.js";
export type { EntitlementClaims, KeySet, Jwk } from "./tokens.js";
