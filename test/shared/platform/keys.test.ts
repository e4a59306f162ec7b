import { describe, expect, it } from "vitest";
import { SHARD_TAGS, SHARDS, createKeys, indexShardOf, shardOf } from "../../../shared/platform/redis/keys.js";

/** CRC16-XMODEM, Redis Cluster's key hash (cluster spec, "Key distribution model"). */
function crc16(bytes: Buffer): number {
  let crc = 0;
  for (const byte of bytes) {
    crc ^= byte << 8;
    for (let bit = 0; bit < 8; bit++) crc = crc & 0x8000 ? ((crc << 1) ^ 0x1021) & 0xffff : (crc << 1) & 0xffff;
  }
  return crc;
}

/** The cluster slot of a key: CRC16 of its hash tag (the text between the first { and the next }, when not empty), mod 16384. */
function slotOf(key: string): number {
  const open = key.indexOf("{");
  const close = open >= 0 ? key.indexOf("}", open + 1) : -1;
  const hashed = close > open + 1 ? key.slice(open + 1, close) : key;
  return crc16(Buffer.from(hashed)) % 16384;
}
const reversed = (i: number): number => Number.parseInt(i.toString(2).padStart(6, "0").split("").reverse().join(""), 2);

describe("shard tags", () => {
  it("put shard i in slot rev(i) × 256 + 128: every shard in its own slot, evenly spaced", () => {
    expect(SHARD_TAGS.length).toBe(SHARDS);
    const keys = createKeys("gw:");
    const slots = SHARD_TAGS.map((_, shard) => slotOf(keys.usageStream(shard)));
    expect(slots).toEqual(SHARD_TAGS.map((_, i) => reversed(i) * 256 + 128));
    expect([...slots].sort((a, b) => a - b)).toEqual(Array.from({ length: SHARDS }, (_, i) => i * 256 + 128));
  });

  it("keep every key a script touches for an organization in its shard's slot, sentinel and stream included", () => {
    const keys = createKeys("gw:");
    for (const orgId of [1, 2, 63, 64, 65, 1000, 123_457]) {
      const shard = shardOf(orgId);
      const slot = slotOf(keys.usageStream(shard));
      const touched = [
        keys.usageStreamOf(orgId),
        keys.snapshotSentinel(shard),
        keys.keySnapshot(orgId, 9),
        keys.orgSnapshot(orgId),
        keys.contentSnapshot(orgId),
        keys.secretSnapshot(orgId),
        keys.rateWindow(orgId, 9, 5),
        keys.refusalWindow(orgId, 9, 5),
        keys.sourceWindow(orgId, 9, 5, "abc"),
        keys.cycleUsed(orgId, 0),
        keys.installations(orgId, 9),
        keys.endpointLabels(orgId, 9, "2026-01-01"),
        keys.pendingInstalls(orgId, 9, "2026-01-01"),
        keys.installSightings(orgId, 9, 5),
      ];
      expect(touched.map(slotOf), `org ${orgId}`).toEqual(touched.map(() => slot));
    }
    const hash = "a1b2c3d4e5f6";
    expect(slotOf(keys.keyIndex(hash))).toBe(slotOf(keys.snapshotSentinel(indexShardOf(hash))));
  });

  it("keep a stream's side keys (the SIEM loop's `inhand` and `late`) in the stream's own slot", () => {
    for (const prefix of ["gw:", "tenant-7:gw:"]) {
      const keys = createKeys(prefix);
      for (const id of [1, 42, 999_999]) {
        const stream = keys.stream(`events:siem:${id}`);
        expect([slotOf(keys.streamSide(stream, "inhand")), slotOf(keys.streamSide(stream, "late"))]).toEqual([
          slotOf(stream),
          slotOf(stream),
        ]);
      }
    }
    expect(() => createKeys("gw:").streamSide("{odd}", "late")).toThrow(/brace/);
  });

  it("spread consecutive organizations over the masters of any cluster whose masters own equal slot ranges", () => {
    for (const masters of [1, 2, 3, 6, 8, 16, 64]) {
      const perMaster = new Array<number>(masters).fill(0);
      const keys = createKeys("gw:");
      // redis-cli --cluster create: master m owns about slots [m × 16384 / masters, (m + 1) × 16384 / masters).
      for (let orgId = 1; orgId <= 6400; orgId++) perMaster[Math.floor((slotOf(keys.orgSnapshot(orgId)) * masters) / 16384)]++;
      const even = 6400 / masters;
      for (const n of perMaster)
        expect(Math.abs(n - even) / even, `${masters} masters: ${perMaster}`).toBeLessThanOrEqual(masters <= 16 ? 0.1 : 0);
    }
  });
});
