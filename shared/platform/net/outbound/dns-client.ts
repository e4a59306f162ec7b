/**
 * A DNS stub client on dns2's wire format. dns2's own UDP and TCP clients cannot set the
 * EDNS DO bit or the CD flag, and do not expose the AD flag, all of which the DNSSEC
 * check needs, so this file does the transport (UDP, then TCP on truncation) and leaves
 * encoding and decoding to `dns2.Packet`. Every query has a time-out and every failure
 * becomes a `DnsAnswer` with a status: nothing here throws for a network fault.
 */
import { randomInt } from "node:crypto";
import dgram from "node:dgram";
import { getServers } from "node:dns";
import net from "node:net";
import { Packet } from "dns2";
import type { Resource } from "dns2";
import type { DnsAnswer, DnsRecord, DnsStatus, RecordType } from "./evidence.js";

export interface DnsServer {
  readonly host: string;
  readonly port: number;
}

export interface QueryFlags {
  /** EDNS DO bit: ask the resolver for DNSSEC records and validation. */
  readonly dnssecOk?: boolean;
  /** CD flag: ask the resolver to skip validation (tells bogus from broken). */
  readonly checkingDisabled?: boolean;
}

export type DnsQuery = (name: string, type: RecordType, flags?: QueryFlags) => Promise<DnsAnswer>;

const EDNS_PAYLOAD = 4096;
const DO_BIT = 0x8000;

class QueryTimeout extends Error {}

/** `node:dns` lists servers as `1.2.3.4`, `1.2.3.4:53`, `::1` or `[::1]:53`. */
export function systemServers(): DnsServer[] {
  return getServers().map((entry) => {
    const bracketed = /^\[([^\]]+)\]:(\d+)$/.exec(entry);
    if (bracketed) return { host: bracketed[1], port: Number(bracketed[2]) };
    const v4WithPort = /^([\d.]+):(\d+)$/.exec(entry);
    if (v4WithPort) return { host: v4WithPort[1], port: Number(v4WithPort[2]) };
    return { host: entry, port: 53 };
  });
}

export function normalizeName(name: string): string {
  return name.trim().toLowerCase().replace(/\.$/, "");
}

/**
 * Why `name` (normalized) cannot be asked, or null: RFC 1035 2.3.4 allows labels of 1 to 63
 * octets and 255 octets on the wire (253 in text). A name from outside (an SPF `include:`, a
 * long verified domain with a DKIM selector before it) may break either; asked anyway, the
 * encoder throws.
 */
export function unaskableName(name: string): string | null {
  if (name === "") return null;
  if (Buffer.byteLength(name) > 253) return "longer than 253 octets";
  for (const label of name.split(".")) {
    if (label === "") return "an empty label";
    if (Buffer.byteLength(label) > 63) return "a label longer than 63 octets";
  }
  return null;
}

export function createDnsClient(resolver: DnsServer | null, timeoutMs: number): DnsQuery {
  return async (rawName, type, flags = {}) => {
    const name = normalizeName(rawName);
    const unaskable = unaskableName(name);
    if (unaskable !== null) return failed(name, type, "error", `not a DNS name: ${unaskable}`);
    // Read per query, not at import: the system list can change and nothing runs at import time.
    const servers = resolver ? [resolver] : systemServers().slice(0, 2);
    let last: DnsAnswer = failed(name, type, "error", "no DNS server configured");
    for (const server of servers) {
      last = await queryServer(server, name, type, flags, timeoutMs);
      if (last.status !== "timeout" && last.status !== "error") return last;
    }
    return last;
  };
}

async function queryServer(server: DnsServer, name: string, type: RecordType, flags: QueryFlags, timeoutMs: number): Promise<DnsAnswer> {
  const id = randomInt(0x10000);
  const deadline = performance.now() + timeoutMs;
  try {
    // Inside the try: whatever the encoder refuses is this query's error, never the caller's throw.
    const message = buildQuery(id, name, type, flags);
    let reply = await sendUdp(server, message, id, timeoutMs);
    // RFC 1035 4.2.1: a truncated UDP reply is retried over TCP for the full answer.
    if (reply.header.tc) reply = await sendTcp(server, message, id, Math.max(1, deadline - performance.now()));
    return toAnswer(name, type, reply);
  } catch (error) {
    if (error instanceof QueryTimeout) return failed(name, type, "timeout", `no reply within ${timeoutMs} ms`);
    return failed(name, type, "error", faultText(error));
  }
}

/**
 * A socket error's message names the server's address and port (`connect ECONNREFUSED
 * 10.0.0.2:53`): the service's own network, and an answer's `error` reaches scan evidence and
 * refusal messages. Such an error is named by its code; this file's own errors name no address.
 */
function faultText(error: unknown): string {
  if (!(error instanceof Error)) return String(error);
  const code = (error as NodeJS.ErrnoException).code;
  return typeof code === "string" ? `the DNS server could not be asked (${code})` : error.message;
}

function buildQuery(id: number, name: string, type: RecordType, flags: QueryFlags): Buffer {
  const packet = new Packet();
  // dns2 types omit the AD/CD header bits its encoder writes; a plain object carries them.
  const header = { id, rd: 1 as const, cd: flags.checkingDisabled ? 1 : 0 };
  packet.header = new Packet.Header(header);
  packet.questions.push(new Packet.Question(name, Packet.TYPE[type], Packet.CLASS.IN));
  // The OPT pseudo-record: class carries the payload size, TTL bit 15 is DO (RFC 6891 6.1.3).
  const opt = new Packet.Resource({
    name: "",
    type: Packet.TYPE.EDNS,
    class: EDNS_PAYLOAD,
    ttl: flags.dnssecOk ? DO_BIT : 0,
  });
  packet.additionals.push(Object.assign(opt, { rdata: [] }));
  return packet.toBuffer();
}

function sendUdp(server: DnsServer, message: Buffer, id: number, timeoutMs: number): Promise<Packet> {
  return new Promise((resolve, reject) => {
    const socket = dgram.createSocket(net.isIPv6(server.host) ? "udp6" : "udp4");
    const timer = setTimeout(() => finish(new QueryTimeout()), timeoutMs);
    const finish = (error: Error | null, reply?: Packet) => {
      clearTimeout(timer);
      socket.removeAllListeners("message");
      socket.close();
      if (error) reject(error);
      else if (reply) resolve(reply);
    };
    socket.on("error", (error) => finish(error));
    socket.on("message", (data, rinfo) => {
      // Only the asked server with the right id may answer: spoofed or stray datagrams are ignored.
      if (rinfo.port !== server.port || (net.isIP(server.host) && rinfo.address !== server.host)) return;
      let reply: Packet;
      try {
        reply = Packet.parse(data);
      } catch {
        return;
      }
      if (reply.header.id === id) finish(null, reply);
    });
    socket.send(message, server.port, server.host, (error) => {
      if (error) finish(error);
    });
  });
}

function sendTcp(server: DnsServer, message: Buffer, id: number, timeoutMs: number): Promise<Packet> {
  return new Promise((resolve, reject) => {
    const socket = net.connect({ host: server.host, port: server.port });
    const chunks: Buffer[] = [];
    let received = 0;
    const timer = setTimeout(() => finish(new QueryTimeout()), timeoutMs);
    const finish = (error: Error | null, reply?: Packet) => {
      clearTimeout(timer);
      socket.destroy();
      if (error) reject(error);
      else if (reply) resolve(reply);
    };
    socket.on("error", (error) => finish(error));
    socket.on("data", (chunk) => {
      chunks.push(chunk);
      received += chunk.length;
      const all = Buffer.concat(chunks, received);
      if (all.length < 2 || all.length < 2 + all.readUInt16BE(0)) return;
      try {
        const reply = Packet.parse(all.subarray(2, 2 + all.readUInt16BE(0)));
        finish(reply.header.id === id ? null : new Error("TCP reply with a different id"), reply);
      } catch (error) {
        finish(error instanceof Error ? error : new Error(String(error)));
      }
    });
    socket.on("end", () => finish(new Error("TCP connection closed before a full reply")));
    const length = Buffer.alloc(2);
    length.writeUInt16BE(message.length);
    socket.write(Buffer.concat([length, message]));
  });
}

function statusOf(rcode: number): DnsStatus {
  if (rcode === 0) return "noerror";
  if (rcode === 3) return "nxdomain";
  if (rcode === 2) return "servfail";
  if (rcode === 5) return "refused";
  return "rcode";
}

function toAnswer(name: string, type: RecordType, reply: Packet): DnsAnswer {
  const header: { rcode: number; ad?: number } = reply.header;
  const records: DnsRecord[] = [];
  const aliases: string[] = [];
  for (const resource of reply.answers) {
    if (resource.type === Packet.TYPE.CNAME && type !== "CNAME") {
      aliases.push(normalizeName(resource.domain ?? ""));
      continue;
    }
    if (resource.type !== Packet.TYPE[type]) continue;
    const record = toRecord(type, resource);
    if (record) records.push(record);
  }
  const soa = reply.authorities.find((r) => r.type === Packet.TYPE.SOA);
  return {
    name,
    type,
    status: statusOf(header.rcode),
    rcode: header.rcode,
    authenticated: header.ad === 1,
    records,
    aliases,
    authoritySoa: soa ? normalizeName(soa.name) : null,
    error: null,
  };
}

function toRecord(type: RecordType, r: Resource): DnsRecord | null {
  const name = normalizeName(r.name);
  switch (type) {
    case "A":
    case "AAAA":
      return r.address ? { type, name, address: r.address } : null;
    case "MX":
      return { type, name, priority: r.priority ?? 0, exchange: normalizeName(r.exchange ?? "") };
    case "TXT": {
      const strings = Array.isArray(r.data) ? r.data : [r.data ?? ""];
      return { type, name, strings };
    }
    case "CNAME":
      return { type, name, target: normalizeName(r.domain ?? "") };
    case "NS":
      return { type, name, host: normalizeName(r.ns ?? "") };
    case "CAA":
      return { type, name, flags: r.flags ?? 0, tag: (r.tag ?? "").toLowerCase(), value: r.value ?? "" };
    case "SOA":
      return { type, name, primary: normalizeName(r.primary ?? ""), serial: r.serial ?? 0 };
    case "DNSKEY":
      return { type, name, flags: r.flags ?? 0, algorithm: r.algorithm ?? 0 };
  }
}

function failed(name: string, type: RecordType, status: DnsStatus, error: string): DnsAnswer {
  return { name, type, status, rcode: null, authenticated: false, records: [], aliases: [], authoritySoa: null, error };
}
