import { describe, expect, it } from "vitest";
import { applyRejection, applyRejections } from "../../src/domain/rejection-replay.js";
import { belief } from "../support/fixtures.js";

describe("applyRejection", () => {
  it("not_true retires the belief (expired)", () => {
    const b = belief({ status: "active" });
    expect(applyRejection(b, "not_true")).toEqual({ ...b, status: "expired" });
  });

  it("changed supersedes the belief", () => {
    const b = belief({ status: "active" });
    expect(applyRejection(b, "changed")).toEqual({ ...b, status: "superseded" });
  });

  it("not_here makes the belief local to its project, and keeps it active", () => {
    const b = belief({ status: "active", portability: "portable", scopeLevel: "user", originScope: "veetbot" });
    expect(applyRejection(b, "not_here")).toEqual({ ...b, portability: "local", scopeLevel: "project" });
  });

  it("unspecified flags for review and leaves the status alone", () => {
    for (const status of ["active", "provisional"] as const) {
      const b = belief({ status, flaggedForReview: false });
      const out = applyRejection(b, "unspecified");
      expect(out).toEqual({ ...b, flaggedForReview: true });
      expect(out.status).toBe(status);
    }
  });

  it("never mutates the belief it is given", () => {
    const b = belief();
    const copy = structuredClone(b);
    for (const kind of ["not_true", "changed", "not_here", "unspecified"] as const) {
      const out = applyRejection(b, kind);
      expect(out).not.toBe(b);
    }
    expect(b).toEqual(copy);
  });
});

describe("applyRejections (replay)", () => {
  it("returns an unchanged belief when there are no rejections", () => {
    const b = belief();
    expect(applyRejections(b, [])).toEqual(b);
  });

  it("re-applies a retirement to a re-derived belief", () => {
    const rederived = belief({ status: "active" });
    expect(applyRejections(rederived, ["not_true"]).status).toBe("expired");
  });

  it("applies every rejection in order", () => {
    const b = belief({ status: "active", portability: "portable", scopeLevel: "user" });
    expect(applyRejections(b, ["unspecified", "not_here", "changed"])).toEqual({
      ...b,
      flaggedForReview: true,
      portability: "local",
      scopeLevel: "project",
      status: "superseded",
    });
  });

  it("is idempotent for repeated rejections", () => {
    const b = belief();
    expect(applyRejections(b, ["not_here", "not_here"])).toEqual(applyRejections(b, ["not_here"]));
    expect(applyRejections(b, ["unspecified", "unspecified"])).toEqual(applyRejection(b, "unspecified"));
  });
});
