import { jsonAroundSlot, newSlotPlaceholder } from "../src/db/json-slot";

describe("jsonAroundSlot", () => {
  const slot = newSlotPlaceholder("short_id");

  it("splits the JSON text around the slot, keeping key order", () => {
    const { before, after } = jsonAroundSlot({ a: 1, short_id: slot, b: "x" }, slot);
    expect(before + JSON.stringify("SALES-7") + after).toBe('{"a":1,"short_id":"SALES-7","b":"x"}');
  });

  it("refuses a value without the slot, or with it twice", () => {
    expect(() => jsonAroundSlot({ a: 1 }, slot)).toThrow(/exactly once/);
    expect(() => jsonAroundSlot({ a: slot, b: slot }, slot)).toThrow(/exactly once/);
  });

  it("makes a different placeholder each time", () => {
    expect(newSlotPlaceholder("short_id")).not.toBe(slot);
  });
});
