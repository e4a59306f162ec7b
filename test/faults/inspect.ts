import { execFile } from "node:child_process";

/**
 * The JavaScript heap a process keeps after a full garbage collection, read through its
 * inspector (the process runs with `--inspect=127.0.0.1:0`; `inspectorUrl` is the
 * `ws://…` address it printed): HeapProfiler.collectGarbage, then process.memoryUsage().
 * This is what a leak raises and nothing else does; RSS and an uncollected heap also move
 * with the collector's timing. The client runs in a child node with WebSocket enabled
 * (Node 20 has it behind a flag); no hook in the product is needed.
 */
export function liveHeapAfterFullGc(inspectorUrl: string): Promise<number> {
  const script = `
    const socket = new WebSocket(${JSON.stringify(inspectorUrl)});
    let id = 0;
    const pending = new Map();
    const call = (method, params = {}) => new Promise((resolve, reject) => {
      pending.set(++id, { resolve, reject });
      socket.send(JSON.stringify({ id, method, params }));
    });
    socket.onmessage = (event) => {
      const message = JSON.parse(event.data);
      const waiting = pending.get(message.id);
      if (!waiting) return;
      pending.delete(message.id);
      message.error ? waiting.reject(new Error(message.error.message)) : waiting.resolve(message.result);
    };
    socket.onerror = () => { process.exitCode = 1; };
    socket.onopen = async () => {
      await call("HeapProfiler.collectGarbage");
      await call("HeapProfiler.collectGarbage");
      const { result } = await call("Runtime.evaluate", { expression: "process.memoryUsage().heapUsed", returnByValue: true });
      process.stdout.write(String(result.value));
      socket.close();
    };`;
  return new Promise((resolve, reject) => {
    execFile(process.execPath, ["--experimental-websocket", "--no-warnings", "-e", script], { timeout: 30_000 }, (error, stdout) => {
      const bytes = Number(stdout);
      if (error || !Number.isFinite(bytes) || bytes <= 0) reject(new Error(`inspector read failed: ${error?.message ?? stdout}`));
      else resolve(bytes);
    });
  });
}
