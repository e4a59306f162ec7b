import { readFile } from "node:fs/promises";
import { Reader, type CountryResponse } from "maxmind";
import { sourcePath } from "../paths.js";

/**
 * Country of an address from an MMDB country database: the packaged GeoLite2 country
 * database of @ip-location-db (records `{country_code}`) unless GEOIP_DB names another
 * file (MaxMind's own GeoLite2/GeoIP2 Country, records `{country: {iso_code}}`; both
 * layouts are read). An address the database cannot place gives null.
 */

export const PACKAGED_COUNTRY_DB = sourcePath("node_modules", "@ip-location-db", "geolite2-country-mmdb", "geolite2-country.mmdb");

interface CountryRecord {
  country_code?: string;
  country?: { iso_code?: string };
  registered_country?: { iso_code?: string };
}

export interface CountryDb {
  countryOf(address: string): string | null;
  readonly path: string;
}

export function countryDbFrom(buffer: Buffer, path: string): CountryDb {
  const reader = new Reader<CountryResponse>(buffer);
  return {
    path,
    countryOf(address: string): string | null {
      let record: CountryRecord | null;
      try {
        record = reader.get(address) as CountryRecord | null;
      } catch {
        return null;
      }
      if (!record) return null;
      const code = record.country_code ?? record.country?.iso_code ?? record.registered_country?.iso_code;
      return typeof code === "string" && /^[A-Z]{2}$/i.test(code) ? code.toUpperCase() : null;
    },
  };
}

/** Reads the database once (the whole file is held in memory; lookups do no I/O). */
export async function openCountryDb(path: string | null): Promise<CountryDb> {
  const file = path ?? PACKAGED_COUNTRY_DB;
  return countryDbFrom(await readFile(file), file);
}
