/**
 * The probation lane's fair share between companies (webhooks/fair-share.ts `shareSlots`), a pure function.
 */
import { shareSlots, type DueQueue } from "../src/webhooks/fair-share";

const queues = (spec: string): DueQueue[] => spec.split(" ").map((c, i) => ({ id: `q${i}`, companyId: c }));

describe("shareSlots", () => {
  it("claims every due queue while the lane has room for all of them (work-conserving: nothing capped)", () => {
    const candidates = queues("X X X X X");
    expect(shareSlots({ candidates, free: 5, busy: new Map(), perCompany: 2, deferStepMs: 10_000 })).toEqual({
      claim: ["q0", "q1", "q2", "q3", "q4"],
      defer: [],
    });
  });

  it("when contended, caps each company at its share and puts its surplus back, spread by shares over", () => {
    // X's crowd is due first; Y's queue stands behind it.
    const candidates = queues("X X X X X X Y");
    const decision = shareSlots({ candidates, free: 4, busy: new Map(), perCompany: 2, deferStepMs: 10_000 });
    expect(decision.claim).toEqual(["q0", "q1", "q6"]);
    expect(decision.defer).toEqual([
      { id: "q2", delayMs: 10_000 },
      { id: "q3", delayMs: 10_000 },
      { id: "q4", delayMs: 20_000 },
      { id: "q5", delayMs: 20_000 },
    ]);
  });

  it("counts what a company already has in flight, and leaves queues alone once the slots are full", () => {
    const candidates = queues("X Y Z Z W");
    const busy = new Map([["X", 2]]);
    const decision = shareSlots({ candidates, free: 2, busy, perCompany: 2, deferStepMs: 1_000 });
    expect(decision.claim).toEqual(["q1", "q2"]);
    expect(decision.defer).toEqual([{ id: "q0", delayMs: 1_000 }]);
  });

  it("claims nothing without a free slot", () => {
    expect(shareSlots({ candidates: queues("X Y"), free: 0, busy: new Map(), perCompany: 2, deferStepMs: 1 })).toEqual({ claim: [], defer: [] });
  });
});
