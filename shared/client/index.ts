/** The verify client (and content reader): docs/client.md. */
export {
  createVerifyClient,
  hostOfDomain,
  CLIENT_NAME,
  CLIENT_VERSION,
  type ClientOptions,
  type ContentParams,
  type VerifyClient,
  type VerifyParams,
} from "./client.js";
export type { ClientReason, ContentAnswer, ContentItem, ContentResult, VerifyAnswer, VerifyResult } from "./answer.js";
export {
  attestedHost,
  checkAttestation,
  contentText,
  valueText,
  type AttestationCheck,
  type AttestationExpected,
  type ContentClaims,
  type SecretClaims,
} from "./attestation.js";
export { memoryStore, webStorageStore, type CacheStore } from "./store.js";
export type { EntitlementClaims, KeySet, Jwk } from "./tokens.js";
