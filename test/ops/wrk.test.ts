import { describe, expect, it } from "vitest";
import { parseWrk } from "../../ops/bench/wrk.js";

const OUTPUT = `Running 5s test @ http://127.0.0.1:41234/api/v1/verify.php
  1 threads and 64 connections
  Thread Stats   Avg      Stdev     Max   +/- Stdev
    Latency     2.20ms    1.02ms  31.87ms   92.13%
    Req/Sec    29.79k     1.24k   31.18k    84.00%
  Latency Distribution
     50%    1.91ms
     75%    2.30ms
     90%    2.88ms
     99%    6.18ms
  148231 requests in 5.00s, 265.10MB read
  Socket errors: connect 0, read 2, write 0, timeout 1
  Non-2xx or 3xx responses: 7
Requests/sec:  29646.12
Transfer/sec:     53.02MB
`;

describe("wrk output", () => {
  it("gives throughput, percentiles in ms, non-2xx and socket errors", () => {
    expect(parseWrk(OUTPUT)).toEqual({ requests: 148231, rps: 29646.12, p50: 1.91, p99: 6.18, non2xx: 7, errors: 3 });
  });

  it("reads microsecond and second latencies", () => {
    const fast = OUTPUT.replace("1.91ms", "520.00us").replace("6.18ms", "1.20s");
    expect(parseWrk(fast)).toMatchObject({ p50: 0.52, p99: 1200 });
  });
});
