/**
 * `notice`: a message for a caller that names an outdated client library. A caller
 * names itself with the `client` parameter or the `x-gateway-client` header, as
 * `<library>/<version>` (e.g. `gateway-js/1.4.2`), or with `sdk_version` alone (the
 * version of an official library). Unknown library names get no notice: third-party
 * clients are not ours to judge.
 */

/** A Map: the library name is the caller's text (`constructor` is no library of ours). */
export const MINIMUM_VERSIONS: ReadonlyMap<string, string> = new Map([
  ["gateway-js", "2.0.0"],
  ["gateway-node", "2.0.0"],
  ["gateway-php", "2.0.0"],
  ["gateway-python", "2.0.0"],
  ["gateway-wordpress", "2.0.0"],
]);

const DEFAULT_MINIMUM = "2.0.0";

function parts(version: string): number[] | null {
  const match = /^v?(\d{1,6})(?:\.(\d{1,6}))?(?:\.(\d{1,6}))?(?:[-+].*)?$/.exec(version.trim());
  return match ? [Number(match[1]), Number(match[2] ?? 0), Number(match[3] ?? 0)] : null;
}

/** -1, 0 or 1; null when either side is not a version. */
export function compareVersions(a: string, b: string): number | null {
  const left = parts(a);
  const right = parts(b);
  if (!left || !right) return null;
  for (let i = 0; i < 3; i++) if (left[i] !== right[i]) return left[i] < right[i] ? -1 : 1;
  return 0;
}

export function clientNotice(client: string | undefined, sdkVersion: string | undefined): string | undefined {
  let library: string | undefined;
  let version: string | undefined;
  if (client) {
    const slash = client.lastIndexOf("/");
    if (slash > 0) {
      library = client.slice(0, slash).trim().toLowerCase();
      version = client.slice(slash + 1);
    }
  }
  version ??= sdkVersion;
  if (version === undefined) return undefined;
  const minimum = library === undefined ? DEFAULT_MINIMUM : MINIMUM_VERSIONS.get(library);
  if (minimum === undefined) return undefined;
  const order = compareVersions(version, minimum);
  if (order === null || order >= 0) return undefined;
  return `${library ?? "Client library"} ${version.trim()} is outdated: upgrade to ${minimum} or later.`;
}
