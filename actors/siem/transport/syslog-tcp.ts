import net from "node:net";
import tls from "node:tls";
import { octetFrame, type SyslogEvent, syslogLine, type SiemTarget } from "../../../shared/events/index.js";
import { trustedCas } from "../../../shared/platform/net/outbound/trust.js";
import { connectionError, DeliveryError, guardedAddress, type PushNetwork } from "./guard.js";

/**
 * RFC 5424 messages over TCP with RFC 6587 octet-counting framing, TLS for `tls` targets
 * (RFC 5425). Plain syslog has no application-level acknowledgement, so one batch is one
 * connection: write every frame, half-close, and count the batch delivered only once the
 * collector has closed its side too (syslog receivers close after reading our FIN). A
 * reset, an error or a silent collector (time-out) fails the whole batch, which is sent
 * again: a collector may see a frame twice, never miss one it acknowledged by closing.
 */
export async function sendSyslog(target: SiemTarget, events: readonly SyslogEvent[], network: PushNetwork): Promise<void> {
  const payload = events.map((event) => octetFrame(syslogLine(event, network.hostname))).join("");
  const { address, isPublic } = await guardedAddress(target.host, network);
  await new Promise<void>((resolve, reject) => {
    let settled = false;
    const finish = (error?: Error) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      socket.destroy();
      if (error) reject(connectionError(error, isPublic));
      else resolve();
    };
    const socket: net.Socket =
      target.protocol === "tls"
        ? tls.connect({
            host: address,
            port: target.port,
            servername: net.isIP(target.host) ? undefined : target.host,
            ca: trustedCas(network.caPem),
          })
        : net.connect({ host: address, port: target.port });
    const timer = setTimeout(
      () => finish(new DeliveryError(`syslog collector did not close within ${network.timeoutMs} ms`)),
      network.timeoutMs,
    );
    socket.once(target.protocol === "tls" ? "secureConnect" : "connect", () => {
      socket.end(payload);
    });
    socket.on("data", () => {}); // a collector that talks back must not stall the socket
    socket.once("error", (error) => finish(error));
    socket.once("close", (hadError) => finish(hadError ? new DeliveryError("syslog connection closed with an error") : undefined));
  });
}
