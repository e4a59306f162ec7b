import { type ChildProcess, spawn } from "node:child_process";
import { INGRESS_NODE_FLAGS } from "../node-flags.js";

/** A server under test, run as its own process so it never shares an event loop with the load generator. */
export interface ServerChild {
  url: string;
  pid: number;
  stop(): Promise<void>;
}

export function startChild(
  script: string,
  args: string[],
  env: NodeJS.ProcessEnv,
  timeoutMs = 20_000,
  nodeFlags: string[] = [],
): Promise<ServerChild> {
  // Every server under test gets the ingress's V8 flags, so the comparison stays like for like.
  const child: ChildProcess = spawn(process.execPath, [...INGRESS_NODE_FLAGS, ...nodeFlags, script, ...args], {
    env,
    stdio: ["ignore", "pipe", "pipe"],
  });
  let stderr = "";
  child.stderr?.on("data", (chunk: Buffer) => {
    stderr = (stderr + chunk.toString()).slice(-4000);
  });
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      child.kill("SIGKILL");
      reject(new Error(`${script} did not start in time: ${stderr}`));
    }, timeoutMs);
    let out = "";
    child.stdout?.on("data", (chunk: Buffer) => {
      out += chunk.toString();
      const match = /listening on (http:\/\/\S+)/.exec(out);
      if (!match) return;
      clearTimeout(timer);
      child.stdout?.removeAllListeners("data");
      child.stdout?.resume();
      resolve({
        url: match[1],
        pid: child.pid ?? 0,
        stop: () =>
          new Promise<void>((done) => {
            if (child.exitCode !== null) return done();
            child.once("exit", () => done());
            child.kill("SIGTERM");
            setTimeout(() => child.kill("SIGKILL"), 5000).unref();
          }),
      });
    });
    child.once("exit", (code) => {
      clearTimeout(timer);
      reject(new Error(`${script} exited with ${code}: ${stderr}`));
    });
  });
}

/** An actor (e.g. the usage actor, which applies what verify counts) running beside the gateway, as in production. */
export function startActor(script: string, name: string, env: NodeJS.ProcessEnv, nodeFlags: string[] = []): ServerChild {
  const child: ChildProcess = spawn(process.execPath, [...nodeFlags, script, "actor", name], {
    env,
    stdio: ["ignore", "ignore", "inherit"],
  });
  return {
    url: "",
    pid: child.pid ?? 0,
    stop: () =>
      new Promise<void>((done) => {
        if (child.exitCode !== null) return done();
        child.once("exit", () => done());
        child.kill("SIGTERM");
        setTimeout(() => child.kill("SIGKILL"), 5000).unref();
      }),
  };
}
