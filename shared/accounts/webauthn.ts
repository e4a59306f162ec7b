import {
  generateAuthenticationOptions,
  generateRegistrationOptions,
  verifyAuthenticationResponse,
  verifyRegistrationResponse,
  type AuthenticationResponseJSON,
  type PublicKeyCredentialCreationOptionsJSON,
  type PublicKeyCredentialRequestOptionsJSON,
  type RegistrationResponseJSON,
} from "@simplewebauthn/server";
import { LIFETIMES, RP_NAME } from "./policy.js";

/**
 * Passkeys (WebAuthn, through @simplewebauthn/server). The relying party is the site:
 * its ID is SITE_URL's host name and the only origin accepted is SITE_URL's origin, so a
 * passkey made for this deployment answers nowhere else and a page of another origin
 * cannot use it. Passkeys are discoverable (resident) credentials: sign-in asks for no
 * e-mail, so it tells nobody who is a member. User verification is preferred, not
 * required: a security key without a PIN still works; whether the user was verified is
 * not used to grant more.
 *
 * The library throws on a bad answer; here that becomes a value (`ok: false`) with the
 * library's message for the log: a refusal, never a fault.
 */

export interface RelyingParty {
  id: string;
  origin: string;
}

export function relyingPartyOf(siteUrl: string): RelyingParty {
  const url = new URL(siteUrl);
  return { id: url.hostname, origin: url.origin };
}

export interface CredentialRef {
  credentialId: string;
  transports: string[];
}

export function registrationOptions(
  rp: RelyingParty,
  user: { handle: Uint8Array<ArrayBuffer>; email: string; name: string },
  existing: readonly CredentialRef[],
): Promise<PublicKeyCredentialCreationOptionsJSON> {
  return generateRegistrationOptions({
    rpName: RP_NAME,
    rpID: rp.id,
    userID: user.handle,
    userName: user.email,
    userDisplayName: user.name,
    timeout: LIFETIMES.challengeMs,
    attestationType: "none",
    excludeCredentials: existing.map((c) => ({ id: c.credentialId, transports: c.transports })),
    authenticatorSelection: { residentKey: "required", userVerification: "preferred" },
  });
}

export interface NewCredential {
  credentialId: string;
  publicKey: Uint8Array;
  counter: number;
  transports: string[];
  deviceType: string;
  backedUp: boolean;
}

export async function verifyRegistration(
  rp: RelyingParty,
  response: RegistrationResponseJSON,
  challenge: string,
): Promise<{ ok: true; credential: NewCredential } | { ok: false; detail: string }> {
  try {
    const result = await verifyRegistrationResponse({
      response,
      expectedChallenge: challenge,
      expectedOrigin: rp.origin,
      expectedRPID: rp.id,
      requireUserVerification: false,
    });
    if (!result.verified) return { ok: false, detail: "registration not verified" };
    const info = result.registrationInfo;
    return {
      ok: true,
      credential: {
        credentialId: info.credential.id,
        publicKey: info.credential.publicKey,
        counter: info.credential.counter,
        transports: info.credential.transports ?? response.response.transports ?? [],
        deviceType: info.credentialDeviceType,
        backedUp: info.credentialBackedUp,
      },
    };
  } catch (error) {
    return { ok: false, detail: (error as Error).message };
  }
}

export function authenticationOptions(rp: RelyingParty): Promise<PublicKeyCredentialRequestOptionsJSON> {
  return generateAuthenticationOptions({ rpID: rp.id, timeout: LIFETIMES.challengeMs, userVerification: "preferred" });
}

export async function verifyAuthentication(
  rp: RelyingParty,
  response: AuthenticationResponseJSON,
  challenge: string,
  stored: { credentialId: string; publicKey: Buffer; counter: number; transports: string[] },
): Promise<{ ok: true; newCounter: number } | { ok: false; detail: string }> {
  try {
    const result = await verifyAuthenticationResponse({
      response,
      expectedChallenge: challenge,
      expectedOrigin: rp.origin,
      expectedRPID: rp.id,
      requireUserVerification: false,
      credential: {
        id: stored.credentialId,
        publicKey: new Uint8Array(stored.publicKey),
        counter: stored.counter,
        transports: stored.transports,
      },
    });
    return result.verified
      ? { ok: true, newCounter: result.authenticationInfo.newCounter }
      : { ok: false, detail: "assertion not verified" };
  } catch (error) {
    return { ok: false, detail: (error as Error).message };
  }
}
