import { create } from "@bufbuild/protobuf";
import { describe, expect, it } from "vitest";
import { InvalidArgumentError } from "../../src/domain/errors.js";
import { RecallRequestSchema, WorkingStateSchema } from "../../src/gen/memory/v1/memory_service_pb.js";
import { RETRIEVAL_POLICY } from "../../src/recall/policy.js";
import { effectiveQuery, fromWorkingState, requestedQuery } from "../../src/recall/query-former.js";
import * as validate from "../../src/server/wire/validate.js";

/** Step 1: the query former builds the recall from the working state as well as the query. */
describe("fromWorkingState", () => {
  const working = {
    objective: "Migrate the billing service to PostgreSQL 16",
    openQuestions: ["Which extensions does billing use?"],
    activeEntities: ["billing service", "Marta"],
    currentMessage: "ok, start with the schema",
  };

  it("joins the caller's text, the current message, the open questions and the objective, in that order", () => {
    const q = fromWorkingState(requestedQuery({ text: "schema migrations" }), working);
    expect(q.text).toBe(
      "schema migrations\nok, start with the schema\nWhich extensions does billing use?\nMigrate the billing service to PostgreSQL 16",
    );
  });

  it("adds the active entities to the subjects; the effective query sorts and deduplicates them", () => {
    const q = fromWorkingState(requestedQuery({ subjects: ["Marta"] }), working);
    expect(effectiveQuery(q, "in_turn", RETRIEVAL_POLICY).subjects).toEqual(["Marta", "billing service"]);
  });

  it("makes a text query from the working state alone, and leaves a query without one untouched", () => {
    expect(fromWorkingState(requestedQuery(), working).text).toContain("Migrate the billing service");
    const plain = requestedQuery({ text: "hello" });
    expect(fromWorkingState(plain, null)).toBe(plain);
    expect(fromWorkingState(requestedQuery(), { objective: " ", openQuestions: [], activeEntities: [], currentMessage: "" }).text).toBeNull();
  });

  it("is deterministic: the same state gives the same query", () => {
    expect(fromWorkingState(requestedQuery(), working)).toEqual(fromWorkingState(requestedQuery(), working));
  });
});

describe("validate.workingState", () => {
  const field = (fn: () => unknown) => {
    try {
      fn();
    } catch (e) {
      if (e instanceof InvalidArgumentError) return e.field;
      throw e;
    }
    return null;
  };
  const request = (w: Parameters<typeof create<typeof WorkingStateSchema>>[1]) => create(RecallRequestSchema, { workingState: create(WorkingStateSchema, w) });

  it("is null when absent and maps every part when present", () => {
    expect(validate.workingState(create(RecallRequestSchema, {}))).toBeNull();
    expect(validate.workingState(request({ objective: "o", openQuestions: ["q"], activeEntities: ["e"], currentMessage: "m" }))).toEqual({
      objective: "o",
      openQuestions: ["q"],
      activeEntities: ["e"],
      currentMessage: "m",
    });
  });

  it("names the field it refuses", () => {
    expect(field(() => validate.workingState(request({ objective: "x".repeat(8001) })))).toBe("working_state.objective");
    expect(field(() => validate.workingState(request({ currentMessage: "x".repeat(8001) })))).toBe("working_state.current_message");
    expect(field(() => validate.workingState(request({ openQuestions: Array.from({ length: 21 }, () => "q") })))).toBe(
      "working_state.open_questions",
    );
    expect(field(() => validate.workingState(request({ openQuestions: ["ok", "x".repeat(8001)] })))).toBe("working_state.open_questions[1]");
    expect(field(() => validate.workingState(request({ activeEntities: ["ok", " "] })))).toBe("working_state.active_entities[1]");
  });
});
