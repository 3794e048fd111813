import { randomUUID } from "node:crypto";
import { describe, expect, it } from "vitest";
import { SENSITIVITY, type Principal } from "../../src/domain/model.js";
import { RETRIEVAL_POLICY } from "../../src/recall/policy.js";
import { STORE_KINDS } from "../support/stores.js";
import { belief, episode, newPrincipal, T0 } from "../support/fixtures.js";
import { filterFor, lexicalIds, lexicalQuery, useStore } from "./store-helpers.js";

/**
 * The lexical arm's BM25F (sql/0005_lexicon.sql, MemoryStore.lexicalCandidates,
 * store/beliefs/source-context.ts): exact scores, per-principal statistics, the
 * source-context field kept at write time, and the boosts.
 */
describe.each(STORE_KINDS)("lexical BM25F ($kind)", ({ open }) => {
  const store = useStore(open);
  const { k1, b, fieldWeights } = RETRIEVAL_POLICY.lexical;

  /** Reference BM25 over per-field occurrence counts, as a textbook computes it. */
  function reference(
    docs: { id: string; subject: number; statement: number; tf: Record<string, { subject: number; statement: number }> }[],
    terms: string[],
  ): Map<string, number> {
    const length = (d: (typeof docs)[number]) => d.subject * fieldWeights.subject + d.statement * fieldWeights.statement;
    const avgdl = docs.reduce((sum, d) => sum + length(d), 0) / docs.length;
    const scores = new Map<string, number>();
    for (const d of docs) {
      let s = 0;
      for (const t of terms) {
        const f = d.tf[t];
        if (!f) continue;
        const df = docs.filter((x) => x.tf[t]).length;
        const idf = Math.log(1 + (docs.length - df + 0.5) / (df + 0.5));
        const tf = f.subject * fieldWeights.subject + f.statement * fieldWeights.statement;
        s += (idf * tf * (k1 + 1)) / (tf + k1 * (1 - b + (b * length(d)) / avgdl));
      }
      if (s > 0) scores.set(d.id, s);
    }
    return scores;
  }

  it("scores exactly as a reference BM25 over the principal's beliefs (subject and statement fields)", async () => {
    const p = newPrincipal();
    // Words chosen to stem to themselves and not be stop words.
    const a = belief({ subject: "Kim", statement: "Kim drinks espresso" });
    const c = belief({ subject: "Lee", statement: "Lee drinks coffee coffee daily" });
    const d = belief({ subject: "Max", statement: "Max drinks tea" });
    const e = belief({ subject: "Kim", statement: "Kim plays chess" });
    await store().putBeliefs(p, [a, c, d, e]);
    const rows = await store().lexicalCandidates(filterFor(p), lexicalQuery(["coffee", "espresso", "kim"]), 10);
    const expected = reference(
      [
        { id: a.beliefId, subject: 1, statement: 3, tf: { kim: { subject: 1, statement: 1 }, espresso: { subject: 0, statement: 1 } } },
        { id: c.beliefId, subject: 1, statement: 5, tf: { coffee: { subject: 0, statement: 2 } } },
        { id: d.beliefId, subject: 1, statement: 3, tf: {} },
        { id: e.beliefId, subject: 1, statement: 3, tf: { kim: { subject: 1, statement: 1 } } },
      ],
      ["coffee", "espresso", "kim"],
    );
    expect(rows.map((r) => r.belief.beliefId)).toEqual([...expected.entries()].sort((x, y) => y[1] - x[1]).map(([id]) => id));
    for (const r of rows) expect(r.armScore).toBeCloseTo(expected.get(r.belief.beliefId)!, 9);
  });

  it("weighs a rare term above a common one (inverse document frequency)", async () => {
    const p = newPrincipal();
    const common = Array.from({ length: 6 }, (_, i) => belief({ subject: `Person${i}`, statement: "Likes hiking trails." }));
    const rare = belief({ subject: "Sam", statement: "Owns a kayak." });
    await store().putBeliefs(p, [...common, rare]);
    expect((await lexicalIds(store(), p, ["hiking", "kayak"]))[0]).toBe(rare.beliefId);
  });

  it("counts document frequencies per principal: another principal's beliefs change nothing", async () => {
    const p = newPrincipal();
    const other = newPrincipal();
    await store().putBeliefs(p, [
      belief({ subject: "Sam", statement: "Owns a kayak." }),
      belief({ subject: "Sam", statement: "Likes hiking trails." }),
    ]);
    const before = await store().lexicalCandidates(filterFor(p), lexicalQuery(["kayak", "hiking"]), 10);
    await store().putBeliefs(
      other,
      Array.from({ length: 20 }, () => belief({ subject: "Ann", statement: "Ann paddles a kayak every weekend." })),
    );
    const after = await store().lexicalCandidates(filterFor(p), lexicalQuery(["kayak", "hiking"]), 10);
    expect(after.map((r) => [r.belief.beliefId, r.armScore])).toEqual(before.map((r) => [r.belief.beliefId, r.armScore]));
  });

  it("keeps the per-principal document count and lengths exact through inserts, updates and repeats", async () => {
    const p = newPrincipal();
    const x = belief({ subject: "Kim", statement: "Kim drinks espresso" });
    await store().putBeliefs(p, [x, belief({ subject: "Lee", statement: "Lee drinks coffee coffee daily" })]);
    await store().putBeliefs(p, [{ ...x, statement: "Kim drinks espresso every single morning" }]);
    await store().putBeliefs(p, [{ ...x, statement: "Kim drinks espresso every single morning" }]);
    const [stats] = await store().db.query<{ docs: number; len_a: number; len_b: number }>(
      "SELECT docs::int AS docs, len_a::int AS len_a, len_b::int AS len_b FROM principal_lexicon WHERE tenant_id = $1 AND principal_id = $2",
      [p.tenantId, p.principalId],
    );
    expect(stats).toEqual({ docs: 2, len_a: 2, len_b: 11 });
  });

  it("keeps the statistics equal to a count from scratch through every kind of write (no trigger does it)", async () => {
    const p = newPrincipal();
    const stats = async (sql: string) =>
      (await store().db.query(`SELECT ${sql} WHERE tenant_id = $1 AND principal_id = $2`, [p.tenantId, p.principalId]))[0];
    const counted = () =>
      stats(`count(*)::int AS docs, sum(lex_lengths[1])::int AS a, sum(lex_lengths[2])::int AS b,
        sum(lex_lengths[3])::int AS c, sum(lex_lengths[4])::int AS d FROM beliefs`);
    const kept = () => stats("docs::int AS docs, len_a::int AS a, len_b::int AS b, len_c::int AS c, len_d::int AS d FROM principal_lexicon");
    const late = episode({ sessionId: "s-stats", content: "we discussed rowing and the regatta at length" });
    const next = episode({ sessionId: "s-stats", content: "then some sailing", occurredAt: new Date(T0.getTime() + 60_000) });
    const x = belief({ subject: "Kim", statement: "Kim rows.", sourceEpisodeIds: [late.episodeId] });
    const y = belief({ subject: "Lee", statement: "Lee sails boats on weekends." });
    await store().putBeliefs(p, [x, y]);
    expect(await kept()).toEqual(await counted());
    await store().appendEpisodes(p, [late, next]); // x's source context arrives after x
    expect((await kept())!.c).toBeGreaterThan(0);
    expect(await kept()).toEqual(await counted());
    await store().putBeliefs(p, [{ ...y, statement: "Lee sails." }]);
    await store().rejectBelief(p, {
      rejectionId: randomUUID(),
      beliefId: x.beliefId,
      kind: "changed",
      correction: belief({ subject: "Kim", statement: "Kim rows and swims daily.", sourceEpisodeIds: [next.episodeId] }),
      scope: "",
      reason: "",
    });
    expect((await kept())!.docs).toBe(3);
    expect(await kept()).toEqual(await counted());
    const triggers = await store().db.query("SELECT tgname FROM pg_trigger WHERE tgrelid = 'beliefs'::regclass AND NOT tgisinternal");
    expect(triggers).toEqual([]);
  });

  describe("source context", () => {
    /** Six turns of one session; the belief cites turn 2 (0-based). */
    async function session(p: Principal, words: string[], sensitivity: number[] = []): Promise<string[]> {
      const turns = words.map((w, i) =>
        episode({
          sessionId: "s-ctx",
          occurredAt: new Date(T0.getTime() + i * 60_000),
          content: `we talked about ${w}`,
          sensitivity: (sensitivity[i] ?? SENSITIVITY.personal) as never,
        }),
      );
      await store().appendEpisodes(p, turns);
      return turns.map((t) => t.episodeId);
    }

    it("finds a belief by the words of its source episode and its neighbours within two turns, not beyond", async () => {
      const p = newPrincipal();
      const ids = await session(p, ["gardening", "volcanoes", "marathons", "origami", "sailing", "astronomy"]);
      const b = belief({ subject: "Kim", statement: "Kim has a new hobby.", sourceEpisodeIds: [ids[2]!] });
      await store().putBeliefs(p, [b]);
      expect(await lexicalIds(store(), p, ["marathons"])).toEqual([b.beliefId]); // the source
      expect(await lexicalIds(store(), p, ["gardening"])).toEqual([b.beliefId]); // two before
      expect(await lexicalIds(store(), p, ["sailing"])).toEqual([b.beliefId]); // two after
      expect(await lexicalIds(store(), p, ["astronomy"])).toEqual([]); // three after
    });

    it("ranks a statement match above a source match above a neighbour match", async () => {
      const p = newPrincipal();
      const ids = await session(p, ["alpha", "bravo", "telescopes", "delta", "echo", "foxtrot"]);
      const inStatement = belief({ subject: "Kim", statement: "Kim collects telescopes." });
      const inSource = belief({ subject: "Lee", statement: "Lee has a hobby.", sourceEpisodeIds: [ids[2]!] });
      const inNeighbour = belief({ subject: "Max", statement: "Max has a hobby.", sourceEpisodeIds: [ids[4]!] });
      await store().putBeliefs(p, [inNeighbour, inSource, inStatement]);
      expect(await lexicalIds(store(), p, ["telescopes"])).toEqual([inStatement.beliefId, inSource.beliefId, inNeighbour.beliefId]);
    });

    it("is filled in when the episodes arrive after the belief", async () => {
      const p = newPrincipal();
      const turn = episode({ sessionId: "late", content: "my grandmother taught me calligraphy" });
      const b = belief({ subject: "Kim", statement: "Kim has a skill.", sourceEpisodeIds: [turn.episodeId] });
      await store().putBeliefs(p, [b]);
      expect(await lexicalIds(store(), p, ["calligraphy"])).toEqual([]);
      await store().appendEpisodes(p, [turn]);
      expect(await lexicalIds(store(), p, ["calligraphy"])).toEqual([b.beliefId]);
      // A later neighbour in the same session joins the context too.
      await store().appendEpisodes(p, [
        episode({ sessionId: "late", occurredAt: new Date(T0.getTime() + 60_000), content: "and woodworking" }),
      ]);
      expect(await lexicalIds(store(), p, ["woodworking"])).toEqual([b.beliefId]);
    });

    it("never indexes an episode more sensitive than the belief", async () => {
      const p = newPrincipal();
      const ids = await session(p, ["gardening", "diagnosis"], [SENSITIVITY.personal, SENSITIVITY.restricted]);
      const b = belief({ subject: "Kim", statement: "Kim has news.", sensitivity: SENSITIVITY.personal, sourceEpisodeIds: [ids[1]!] });
      await store().putBeliefs(p, [b]);
      expect(await lexicalIds(store(), p, ["diagnosis"])).toEqual([]);
      expect(await lexicalIds(store(), p, ["gardening"])).toEqual([b.beliefId]); // the neighbour is fine
    });

    it("only reads the principal's own episodes", async () => {
      const p = newPrincipal();
      const other = newPrincipal();
      const foreign = episode({ sessionId: "x", content: "submarine" });
      await store().appendEpisodes(other, [foreign]);
      const b = belief({ subject: "Kim", statement: "Kim said something.", sourceEpisodeIds: [foreign.episodeId] });
      await store().putBeliefs(p, [b]);
      expect(await lexicalIds(store(), p, ["submarine"])).toEqual([]);
    });
  });

  describe("boosts", () => {
    it("boosts beliefs about a subject the question names", async () => {
      const p = newPrincipal();
      const kim = belief({ subject: "Kim", statement: "Went to the beach." });
      const lee = belief({ subject: "Lee", statement: "Went to the beach." });
      await store().putBeliefs(p, [kim, lee]);
      const plain = await store().lexicalCandidates(filterFor(p), lexicalQuery(["beach"]), 10);
      expect(plain[0]!.armScore).toBeCloseTo(plain[1]!.armScore, 12);
      const named = await store().lexicalCandidates(filterFor(p), lexicalQuery(["beach"], { names: ["lee"] }), 10);
      expect(named.map((r) => r.belief.beliefId)).toEqual([lee.beliefId, kim.beliefId]);
      expect(named[0]!.armScore / named[1]!.armScore).toBeCloseTo(RETRIEVAL_POLICY.lexical.namedSubjectBoost, 9);
    });

    it("boosts beliefs valid from a month and year the question names", async () => {
      const p = newPrincipal();
      const may = belief({ subject: "Kim", statement: "Went camping.", validFrom: new Date("2023-05-20T00:00:00Z") });
      const june = belief({ subject: "Kim", statement: "Went camping.", validFrom: new Date("2023-06-20T00:00:00Z") });
      const may2022 = belief({ subject: "Kim", statement: "Went camping.", validFrom: new Date("2022-05-20T00:00:00Z") });
      await store().putBeliefs(p, [may, june, may2022]);
      const ids = async (dates: { years: number[]; months: number[] }) =>
        (await store().lexicalCandidates(filterFor(p), lexicalQuery(["camping"], { dates }), 10)).map(
          (r) => r.belief.beliefId,
        );
      expect((await ids({ years: [2023], months: [5] }))[0]).toBe(may.beliefId);
      expect((await ids({ years: [2022], months: [] }))[0]).toBe(may2022.beliefId);
      expect((await ids({ years: [], months: [6] }))[0]).toBe(june.beliefId);
    });

    it("resolves a misspelt name to the subject by trigram similarity, among eligible beliefs only", async () => {
      const p = newPrincipal();
      await store().putBeliefs(p, [
        belief({ subject: "Melanie", statement: "Paints landscapes." }),
        belief({ subject: "Hidden Person", statement: "Secret.", sensitivity: SENSITIVITY.restricted }),
      ]);
      const f = filterFor(p, { ceiling: SENSITIVITY.personal });
      expect(await store().resolveNamedSubjects(f, ["melanie"], [], 0.4)).toEqual({ exact: ["melanie"], fuzzy: [] });
      expect(await store().resolveNamedSubjects(f, ["melanei"], ["melanei"], 0.4)).toEqual({ exact: [], fuzzy: ["melanie"] });
      expect(await store().resolveNamedSubjects(f, ["hidden person"], ["hiden"], 0.2)).toEqual({ exact: [], fuzzy: [] });
      expect(await store().resolveNamedSubjects(filterFor(newPrincipal()), ["melanie"], ["melanie"], 0.4)).toEqual({ exact: [], fuzzy: [] });
    });
  });
});
