import { getServers } from "node:dns";
import DNS from "dns2";

/**
 * TXT lookup through DNS_RESOLVER (or the system's first resolver) with dns2. Each
 * record's character-strings are joined, as RFC 7208 says for SPF and as every TXT
 * verification scheme expects.
 */
export async function lookupTxt(resolver: { host: string; port: number } | null, name: string, timeoutMs = 3000): Promise<string[]> {
  const server = resolver ?? systemResolver();
  const resolve = DNS.UDPClient({ dns: server.host, port: server.port, timeout: timeoutMs } as never) as unknown as (
    name: string,
    type: string,
  ) => Promise<{ answers: { type: number; data?: unknown }[] }>;
  const response = await resolve(name, "TXT");
  return response.answers
    .filter((a) => a.type === DNS.Packet.TYPE.TXT)
    .map((a) => {
      const data = (a as { data?: unknown }).data;
      return Array.isArray(data) ? data.join("") : String(data ?? "");
    });
}

function systemResolver(): { host: string; port: number } {
  const first = getServers()[0] ?? "127.0.0.1";
  const match = /^\[?([^\]]+?)\]?(?::(\d+))?$/.exec(first);
  return { host: match?.[1] ?? first, port: match?.[2] ? Number(match[2]) : 53 };
}
