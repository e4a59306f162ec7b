import type { KeySnapshot } from "./snapshots/types.js";
import { PASS, refuse, type CountryOf, type Verdict } from "./types.js";

/**
 * Country rules. The block list is checked first, then the allowed list. An address
 * that cannot be placed in a country (private ranges, unknown blocks, no address) is
 * let through by both: the contract says so, and refusing every visitor the database
 * does not know would lock out legitimate traffic.
 */
export function checkCountries(
  key: Pick<KeySnapshot, "countries_allow" | "countries_block">,
  address: string | null,
  countryOf: CountryOf,
): Verdict {
  if (key.countries_block.length === 0 && key.countries_allow.length === 0) return PASS;
  const country = address === null ? null : countryOf(address);
  if (country === null) return PASS;
  if (key.countries_block.includes(country)) return refuse("geo_blocked");
  if (key.countries_allow.length > 0 && !key.countries_allow.includes(country)) return refuse("geo_not_allowed");
  return PASS;
}
