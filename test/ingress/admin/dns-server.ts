import DNS from "dns2";

/**
 * A tiny authoritative DNS server for tests, on a random UDP port of 127.0.0.1. `txt`
 * maps a lower-case name to its TXT records, each a string or the character-strings of
 * one record; anything else is NXDOMAIN. Tests change the map while it runs.
 */
export interface TestDnsServer {
  port: number;
  resolver: string;
  txt: Map<string, (string | string[])[]>;
  queries: string[];
  close(): Promise<void>;
}

export async function startDnsServer(): Promise<TestDnsServer> {
  const txt = new Map<string, (string | string[])[]>();
  const queries: string[] = [];
  const server = DNS.createServer({
    udp: true,
    handle: (request, send) => {
      const response = DNS.Packet.createResponseFromRequest(request);
      const [question] = request.questions;
      const name = question.name.toLowerCase().replace(/\.$/, "");
      queries.push(name);
      const records = question.type === DNS.Packet.TYPE.TXT ? txt.get(name) : undefined;
      if (!records) {
        response.header.rcode = 3; // NXDOMAIN
      } else {
        for (const data of records) {
          response.answers.push({ name: question.name, type: DNS.Packet.TYPE.TXT, class: DNS.Packet.CLASS.IN, ttl: 60, data } as never);
        }
      }
      send(response);
    },
  });
  const addresses = (await server.listen({ udp: { port: 0, address: "127.0.0.1" } as never })) as unknown as { udp: { port: number } };
  const port = addresses.udp.port;
  return {
    port,
    resolver: `127.0.0.1:${port}`,
    txt,
    queries,
    async close() {
      await server.close();
    },
  };
}
