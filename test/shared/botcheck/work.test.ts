import { createHash, randomBytes } from "node:crypto";
import { describe, expect, it } from "vitest";
import { DEFAULT_DIFFICULTY, difficulties, MAX_DIFFICULTY, parseProof, proofBits } from "../../../shared/botcheck/proof.js";
import { solveWork, WORK_MAX_COUNTER, workSearcher } from "../../../shared/botcheck/work.js";

/** Leading zero bits of SHA-256(nonce ‖ counter), from node:crypto and a bit string: the definition, spelled out. */
function reference(nonce: string, counter: number): number {
  const counterHex = counter.toString(16).padStart(8, "0");
  const digest = createHash("sha256")
    .update(Buffer.from(nonce + counterHex, "hex"))
    .digest();
  const bitString = [...digest].map((b) => b.toString(2).padStart(8, "0")).join("");
  return bitString.indexOf("1") < 0 ? 256 : bitString.indexOf("1");
}

describe("the hold's proof-of-work", () => {
  it("the widget's SHA-256 and the service's node:crypto agree with the definition on 20,000 random cases", () => {
    for (let i = 0; i < 20_000; i++) {
      const nonce = randomBytes(16).toString("hex");
      const counter =
        i < 10
          ? [0, 1, 255, 256, 65_535, 2 ** 24, 2 ** 31 - 1, 2 ** 31, WORK_MAX_COUNTER - 1, WORK_MAX_COUNTER][i]
          : randomBytes(4).readUInt32BE(0);
      const expected = reference(nonce, counter);
      expect(proofBits(nonce, counter)).toBe(expected);
      expect(workSearcher(nonce)(counter)).toBe(Math.min(expected, 32));
    }
  });

  it("solveWork finds the first counter with enough zero bits", () => {
    const nonce = "0f".repeat(16);
    const found = solveWork(nonce, 12);
    expect(proofBits(nonce, found)).toBeGreaterThanOrEqual(12);
    for (let c = 0; c < found; c++) expect(proofBits(nonce, c)).toBeLessThan(12);
    expect(solveWork(nonce, 12, found + 1)).toBeGreaterThan(found);
  });

  it.each([
    [0, 0],
    [17, 17],
    ["17", 17],
    [" 42 ", 42],
    [WORK_MAX_COUNTER, WORK_MAX_COUNTER],
    [String(WORK_MAX_COUNTER), WORK_MAX_COUNTER],
    [WORK_MAX_COUNTER + 1, undefined],
    [-1, undefined],
    [1.5, undefined],
    ["1.5", undefined],
    ["0x10", undefined],
    ["", undefined],
    [null, undefined],
    [undefined, undefined],
    [{ counter: 1 }, undefined],
    [Number.NaN, undefined],
  ])("reads proof %j as %j", (value, expected) => {
    expect(parseProof(value)).toBe(expected);
  });

  it("asks two bits more without evidence; difficulty 0 asks no proof at all", () => {
    expect(difficulties(undefined)).toEqual({ difficulty: DEFAULT_DIFFICULTY, withoutEvidence: DEFAULT_DIFFICULTY + 2 });
    expect(difficulties(12)).toEqual({ difficulty: 12, withoutEvidence: 14 });
    expect(difficulties(0)).toEqual({ difficulty: 0, withoutEvidence: 0 });
    expect(MAX_DIFFICULTY + 2).toBeLessThanOrEqual(32); // the widget counts the first word only
  });
});
