import { createHash, generateKeyPairSync, randomBytes, sign, type KeyObject } from "node:crypto";
import { isoCBOR } from "@simplewebauthn/server/helpers";

/**
 * A software passkey for HTTP tests: an ES256 key pair and a signature counter, answering
 * WebAuthn options exactly as a browser with a "none"-attestation authenticator would
 * (clientDataJSON, authenticatorData, attestationObject, DER signatures). The Chromium tests
 * use a real virtual authenticator; this one lets the HTTP tests replay an answer, roll the
 * counter back, claim another member's credential ID or sign for another origin.
 */

const b64url = (bytes: Uint8Array) => Buffer.from(bytes).toString("base64url");
const sha256 = (data: Uint8Array | string) => createHash("sha256").update(data).digest();

const FLAG_UP = 0x01;
const FLAG_UV = 0x04;
const FLAG_AT = 0x40;

export interface SoftPasskey {
  credentialId: Buffer;
  /** The user handle the registration options gave (base64url), answered on sign-in. */
  userHandle: string;
  privateKey: KeyObject;
  counter: number;
}

function coseKey(publicKey: KeyObject): Uint8Array {
  const jwk = publicKey.export({ format: "jwk" });
  return isoCBOR.encode(
    new Map<number, number | Uint8Array>([
      [1, 2],
      [3, -7],
      [-1, 1],
      [-2, Buffer.from(jwk.x as string, "base64url")],
      [-3, Buffer.from(jwk.y as string, "base64url")],
    ]),
  );
}

function clientData(type: string, challenge: string, origin: string): Buffer {
  return Buffer.from(JSON.stringify({ type, challenge, origin, crossOrigin: false }));
}

interface CreationOptions {
  challenge: string;
  rp: { id: string };
  user: { id: string };
}

/** Answers registration options: a new credential, and the JSON a browser would post. */
export function register(options: CreationOptions, origin: string, override: { credentialId?: Buffer } = {}) {
  const { privateKey, publicKey } = generateKeyPairSync("ec", { namedCurve: "P-256" });
  const credentialId = override.credentialId ?? randomBytes(32);
  const idLength = Buffer.alloc(2);
  idLength.writeUInt16BE(credentialId.length);
  const authData = Buffer.concat([
    sha256(options.rp.id),
    Buffer.from([FLAG_UP | FLAG_UV | FLAG_AT]),
    Buffer.alloc(4),
    Buffer.alloc(16),
    idLength,
    credentialId,
    coseKey(publicKey),
  ]);
  const attestationObject = isoCBOR.encode(
    new Map<string, string | Map<string, string> | Uint8Array>([
      ["fmt", "none"],
      ["attStmt", new Map<string, string>()],
      ["authData", authData],
    ]),
  );
  const passkey: SoftPasskey = { credentialId, userHandle: options.user.id, privateKey, counter: 0 };
  const response = {
    id: b64url(credentialId),
    rawId: b64url(credentialId),
    type: "public-key",
    response: {
      clientDataJSON: b64url(clientData("webauthn.create", options.challenge, origin)),
      attestationObject: b64url(attestationObject),
      transports: ["internal"],
    },
    clientExtensionResults: {},
  };
  return { passkey, response };
}

/** Answers authentication options with the passkey, moving its counter forward (or to `counter`). */
export function authenticate(
  passkey: SoftPasskey,
  options: { challenge: string; rpId: string },
  origin: string,
  override: { counter?: number } = {},
) {
  passkey.counter = override.counter ?? passkey.counter + 1;
  const counter = Buffer.alloc(4);
  counter.writeUInt32BE(passkey.counter);
  const authData = Buffer.concat([sha256(options.rpId), Buffer.from([FLAG_UP | FLAG_UV]), counter]);
  const data = clientData("webauthn.get", options.challenge, origin);
  const signature = sign("sha256", Buffer.concat([authData, sha256(data)]), passkey.privateKey);
  return {
    id: b64url(passkey.credentialId),
    rawId: b64url(passkey.credentialId),
    type: "public-key",
    response: {
      clientDataJSON: b64url(data),
      authenticatorData: b64url(authData),
      signature: b64url(signature),
      userHandle: passkey.userHandle,
    },
    clientExtensionResults: {},
  };
}
