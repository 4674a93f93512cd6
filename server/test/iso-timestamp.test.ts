import { toIsoTimestamp } from "../src/services/iso-timestamp";

describe("toIsoTimestamp", () => {
  it("matches Date.prototype.toISOString across days, years and the epoch", () => {
    const samples = [0, -1, 1, 86_399_999, 86_400_000, 951_782_400_000 /* 2000-02-29 */, 1_795_250_000_123, -62_167_219_200_000, 253_402_300_799_999];
    for (let i = 0; i < 20_000; i++) samples.push(Math.floor(Math.random() * 4e12) - 1e12);
    for (const ms of samples) expect(toIsoTimestamp(new Date(ms))).toBe(new Date(ms).toISOString());
  });

  it("falls back to toISOString outside four-digit years and throws for invalid dates like it", () => {
    for (const ms of [-62_167_219_200_001, 253_402_300_800_000, 8.64e15]) {
      expect(toIsoTimestamp(new Date(ms))).toBe(new Date(ms).toISOString());
    }
    expect(() => toIsoTimestamp(new Date(Number.NaN))).toThrow(RangeError);
  });
});
