/**
 * services/wake-throttle.ts (issue 31, batch writes): a non-atomic batch wakes the webhook dispatcher at once for its
 * first committed operation, then at most once per interval (a trailing wake-up for the ones held back), and once
 * more when it ends with one held back; nothing after that.
 */
import { throttleWakes } from "../src/services/wake-throttle";

beforeEach(() => {
  jest.useFakeTimers();
});
afterEach(() => {
  jest.useRealTimers();
});

describe("throttleWakes", () => {
  const setUp = () => {
    const sent: number[] = [];
    const throttled = throttleWakes(() => sent.push(Date.now()), 50, () => Date.now());
    return { sent, throttled, start: Date.now() };
  };

  it("wakes at once the first time, then holds later calls back into one trailing wake-up per interval", () => {
    const { sent, throttled, start } = setUp();
    throttled.wake();
    expect(sent).toEqual([start]);
    for (let i = 0; i < 10; i++) {
      jest.advanceTimersByTime(3);
      throttled.wake();
    }
    expect(sent).toHaveLength(1);
    jest.advanceTimersByTime(20); // 50 ms after the first
    expect(sent).toEqual([start, start + 50]);
    // Quiet afterwards: no call, no wake-up.
    jest.advanceTimersByTime(500);
    expect(sent).toHaveLength(2);
    // A call long after the last wake-up is sent at once.
    throttled.wake();
    expect(sent).toEqual([start, start + 50, start + 550]);
  });

  it("flush sends a held-back wake-up at once and leaves no timer behind; with nothing held back it sends nothing", () => {
    const { sent, throttled, start } = setUp();
    throttled.flush();
    expect(sent).toEqual([]);
    throttled.wake();
    jest.advanceTimersByTime(10);
    throttled.wake();
    throttled.flush();
    expect(sent).toEqual([start, start + 10]);
    expect(jest.getTimerCount()).toBe(0);
    jest.advanceTimersByTime(500);
    expect(sent).toHaveLength(2);
    throttled.flush();
    expect(sent).toHaveLength(2);
  });
});
