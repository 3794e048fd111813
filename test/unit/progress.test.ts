import { describe, expect, it } from "vitest";
import { Progress } from "../../src/cli/progress.js";

function fakeStream(isTTY: boolean) {
  const writes: string[] = [];
  return { isTTY, writes, write: (text: string) => writes.push(text) };
}

describe("progress on stderr", () => {
  it("off a terminal: a full line with count, rate and ETA every interval, nothing in between", () => {
    let now = 0;
    const stream = fakeStream(false);
    const progress = new Progress({ label: "validating", unit: "lines", total: 50_000, stream, intervalMs: 5000, now: () => now });
    now = 1000;
    progress.tick(4000);
    expect(stream.writes).toEqual([]);
    now = 5000;
    progress.tick(16_000);
    expect(stream.writes).toEqual(["validating: 20,000 / 50,000 lines (4,000 lines/s, ETA 8 s)\n"]);
    now = 7000;
    progress.tick(1);
    expect(stream.writes).toHaveLength(1);
    now = 10_000;
    progress.tick(4999);
    expect(stream.writes[1]).toBe("validating: 25,000 / 50,000 lines (2,500 lines/s, ETA 10 s)\n");
    progress.done();
    expect(stream.writes).toHaveLength(2);
  });

  it("on a terminal: one line redrawn in place, finished by done()", () => {
    let now = 0;
    const stream = fakeStream(true);
    const progress = new Progress({ label: "writing", unit: "records", stream, now: () => now });
    now = 200;
    progress.tick(10);
    now = 400;
    progress.tick(10);
    expect(stream.writes).toEqual(["\r\x1b[Kwriting: 10 records (50 records/s)", "\r\x1b[Kwriting: 20 records (50 records/s)"]);
    progress.done();
    expect(stream.writes.at(-1)).toBe("\r\x1b[Kwriting: 20 records (50 records/s)\n");
  });

  it("long ETAs read in minutes and hours", () => {
    let now = 0;
    const progress = new Progress({ label: "generating", unit: "beliefs", total: 1_000_000, stream: fakeStream(false), now: () => now });
    now = 10_000;
    progress.tick(1000);
    expect(progress.line(now)).toBe("generating: 1,000 / 1,000,000 beliefs (100 beliefs/s, ETA 2.8 h)");
    progress.tick(99_000);
    expect(progress.line(now)).toBe("generating: 100,000 / 1,000,000 beliefs (10,000 beliefs/s, ETA 2 min)");
    progress.tick(400_000);
    expect(progress.line(now)).toBe("generating: 500,000 / 1,000,000 beliefs (50,000 beliefs/s, ETA 10 s)");
  });
});
