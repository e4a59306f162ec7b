/**
 * How many of each thing an organization may hold where the contract sets no number
 * (operator-api.md sets only the plan's key count). A create past the limit is refused 409
 * `limit_reached` with `resource` and `limit`; nothing is written. Each count is taken under
 * a transaction lock on (organization, resource) (ingress/admin/common.ts atOrgLimit; a
 * finding's notes under the finding's row lock), so two creates at once cannot both take the
 * last place. docs/decisions.md ("Limits").
 */
export const ORG_LIMITS = {
  /** SIEM destinations: each is a delivery loop in the pushers. */
  siem_destinations: 20,
  /** Webhooks: each event is one delivery per webhook. */
  webhooks: 20,
  /** Organization tokens neither revoked nor expired. */
  tokens: 50,
  members: 500,
  /** Domains: each verified one is scanned on the monitor's schedule. */
  domains: 500,
  /** Content items, each up to 64 KiB, all in the organization's one snapshot in Redis. */
  content: 250,
  /** Secrets, sealed, in the same snapshot. */
  secrets: 100,
  /** Risk acceptances in force (not released). */
  risks: 1000,
  /** Notes on one assigned finding. */
  notes: 500,
  /** Passkeys of one member. */
  passkeys: 20,
} as const;

export type LimitedResource = keyof typeof ORG_LIMITS;
