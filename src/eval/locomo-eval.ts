import { readFile } from "node:fs/promises";
import { pino } from "pino";
import { SENSITIVITY } from "../domain/model.js";
import { recall, type PipelineDeps } from "../recall/pipeline.js";
import { documentWeights, RETRIEVAL_POLICY } from "../recall/policy.js";
import { withQueryCache } from "../embed/query-embedding-cache.js";
import { requestedQuery, type RequestedQuery } from "../recall/query-former.js";
import { MemoryStore } from "../store/memory-store.js";
import { loadMigrations, migrate } from "../store/migrate.js";
import { createPgliteClient, openPglite } from "../store/pglite/pglite-client.js";
import type { Embedder } from "../ports/embedder.js";
import { EmbeddingBackfill } from "../embed/embedding-backfill.js";
import { enableSemantic, SemanticStore } from "../store/candidates/semantic-store.js";
import { DEFAULT_SEMANTIC_SIMILARITY, type SemanticRanking, type SemanticSimilarity } from "../domain/semantic-calibration.js";
import { Bm25Index } from "./bm25.js";
import { readConversation } from "./locomo-data.js";
import { aggregate, percentile, scoreQuestion, type Aggregate, type QuestionScore } from "./retrieval-metrics.js";
import {
  coverageCeiling,
  emptyTally,
  formatBreakdown,
  groupsOf,
  reportGroup,
  scoreInjected,
  type CategoryGroup,
  type GroupReport,
  type GroupTally,
} from "./locomo-breakdown.js";
import { writeDetails, type QuestionDetail } from "./locomo-details.js";

/**
 * `recall eval locomo FILE`: loads each conversation into its own principal
 * of a fresh embedded store, asks every question through the real in-turn
 * pipeline with a fixed item cap and token budget and no relevance floor
 * (min_score 0: the ranking alone), and scores the ranked beliefs against
 * the evidence, beside a plain BM25 over the same beliefs.
 * Each question is also asked at the production in-turn caps (or --items /
 * --budget), floor on, to score what is actually injected; the figures are
 * reported per category against the coverage ceiling (locomo-breakdown.ts).
 */

export const KS = [5, 10, 20] as const;
const MAX_ITEMS = 20;
const BUDGET_TOKENS = 4000;
/** The ranked list is asked with no floor, absolute or relative: it measures the ranking, the injected block the floor. */
const NO_FLOOR = 0;

export interface LocomoOptions {
  conversations?: number;
  questionsPerConversation?: number;
  /** Also pass the speakers a question names as structured subjects (default: the question text alone). */
  subjects?: boolean;
  /** Adds the semantic arm with this embedder (every belief embedded before the questions). */
  semantic?: Embedder;
  /** Called after each question with the count so far and the total (for progress on stderr). */
  onQuestion?: (answered: number, total: number) => void;
  /** The semantic arm's calibration (default: the hashed embedder's). */
  semanticSimilarity?: SemanticSimilarity;
  /** Caps of the injected block; 0 or unset: the policy's in-turn defaults (12 items, 600 tokens). */
  injectedItems?: number;
  injectedBudget?: number;
  /** Writes one JSON line per question to this file (locomo-details.ts). */
  details?: string;
  /** The semantic arm's cap and fusion (default: the policy's). */
  semanticRanking?: SemanticRanking;
}

export interface LocomoReport {
  subjects: boolean;
  /** The semantic arm's embedder id (and its cap and weight when not the defaults), or null when the arm was off. */
  semantic: string | null;
  conversations: number;
  beliefs: number;
  questions: number;
  skippedQuestions: number;
  /** group ("1-4" | "5") → system → k → aggregate */
  results: Record<string, Record<"recall" | "bm25", Record<number, Aggregate>>>;
  tokensPerRecall: number;
  latencyMs: { p50: number; p95: number };
  /** Per category (1–5, and 1–4 together): ranking against the ceiling, and the injected block. */
  categories: Partial<Record<CategoryGroup, GroupReport>>;
  /** The caps the injected block was rendered at. */
  injectedCaps: { items: number; budget: number };
}

export async function evaluateLocomo(file: string, options: LocomoOptions = {}): Promise<LocomoReport> {
  const samples = (JSON.parse(await readFile(file, "utf8")) as Record<string, unknown>[]).slice(0, options.conversations);
  const db = await openPglite(undefined, { vector: options.semantic !== undefined });
  const client = createPgliteClient(db);
  await migrate(client, await loadMigrations());
  const store = new MemoryStore(client);
  const semantic = options.semantic
    ? await semanticSearch(client, options.semantic, options.semanticSimilarity ?? DEFAULT_SEMANTIC_SIMILARITY.hashed, options.semanticRanking)
    : undefined;
  // Traces are written straight to the store: the evaluation has no reason to bound them.
  const traces = { record: async (p: Parameters<MemoryStore["recordTrace"]>[0], t: Parameters<MemoryStore["recordTrace"]>[1]) => void (await store.recordTrace(p, t)) };
  const deps: PipelineDeps = {
    store,
    traces,
    policy: RETRIEVAL_POLICY,
    clock: () => new Date(),
    traceRetentionHours: 1,
    heads: store,
    ...(semantic ? { semantic: semantic.search } : {}),
  };

  const scores: Record<string, Record<"recall" | "bm25", Record<number, QuestionScore[]>>> = {};
  const bucket = (group: string) =>
    (scores[group] ??= {
      recall: Object.fromEntries(KS.map((k) => [k, []])),
      bm25: Object.fromEntries(KS.map((k) => [k, []])),
    });
  const tallies: Partial<Record<CategoryGroup, GroupTally>> = {};
  const tally = (g: CategoryGroup) => (tallies[g] ??= emptyTally(KS));
  const injectedCaps = {
    items: options.injectedItems || RETRIEVAL_POLICY.moments.in_turn.maxItems,
    budget: options.injectedBudget || RETRIEVAL_POLICY.moments.in_turn.budgetTokens,
  };
  const details: QuestionDetail[] = [];
  const latencies: number[] = [];
  const tokens: number[] = [];
  let beliefs = 0;
  let questions = 0;
  let skipped = 0;

  const conversations = samples.map(readConversation);
  const total = conversations.reduce((n, c) => n + c.questions.slice(0, options.questionsPerConversation).length, 0);
  try {
    for (const conv of conversations) {
      const principal = { tenantId: "locomo", principalId: conv.sampleId };
      for (let i = 0; i < conv.episodes.length; i += 1000) await store.appendEpisodes(principal, conv.episodes.slice(i, i + 1000));
      for (let i = 0; i < conv.beliefs.length; i += 1000) await store.putBeliefs(principal, conv.beliefs.slice(i, i + 1000));
      await store.analyzeIfEmbedded();
      if (semantic) while ((await semantic.backfill.embedBatch()) > 0);
      beliefs += conv.beliefs.length;
      skipped += conv.skipped;
      const bm25 = new Bm25Index(conv.beliefs.map((b) => ({ id: b.beliefId, text: `${b.subject} ${b.statement}` })));
      const provenanceOf = (id: string) => conv.provenance.get(id) ?? [];
      const cited = new Set([...conv.provenance.values()].flat());

      for (const q of conv.questions.slice(0, options.questionsPerConversation)) {
        questions += 1;
        // Optionally, as an agent runtime might: the people the question names as subjects.
        const named = options.subjects ? conv.speakers.filter((s) => q.question.toLowerCase().includes(s.toLowerCase())) : [];
        const started = performance.now();
        const { result } = await askInTurn(deps, principal, conv.sampleId, inTurnQuery(q.question, named, MAX_ITEMS, BUDGET_TOKENS, NO_FLOOR));
        latencies.push(performance.now() - started);
        tokens.push(result.tokens);
        const ranked = result.items.map((i) => provenanceOf(i.beliefId));
        const baseline = bm25.search(q.question, MAX_ITEMS).map(provenanceOf);
        const group = q.category === 5 ? "5" : "1-4";
        for (const k of KS) {
          bucket(group).recall[k]!.push(scoreQuestion(ranked, q.evidence, k));
          bucket(group).bm25[k]!.push(scoreQuestion(baseline, q.evidence, k));
        }
        // What the production-size block would inject for the same question.
        const block = (await askInTurn(deps, principal, conv.sampleId, inTurnQuery(q.question, named, injectedCaps.items, injectedCaps.budget))).result;
        const injected = scoreInjected(block.items.map((i) => provenanceOf(i.beliefId)), q.evidence, block.tokens);
        const ceiling = coverageCeiling(q.evidence, cited);
        for (const g of groupsOf(q.category)) {
          const t = tally(g);
          for (const k of KS) {
            t.ranked[k]!.push(scoreQuestion(ranked, q.evidence, k));
            t.bm25[k]!.push(scoreQuestion(baseline, q.evidence, k));
          }
          t.ceiling.push(ceiling);
          t.injected.push(injected);
        }
        if (options.details) {
          const wanted = new Set(q.evidence);
          details.push({
            conversation: conv.sampleId,
            question: q.question,
            category: q.category,
            evidence: q.evidence,
            citedEvidence: q.evidence.filter((d) => cited.has(d)),
            ranked: result.items.map((i) => ({
              beliefId: i.beliefId,
              statement: i.statement,
              dia: provenanceOf(i.beliefId),
              arms: i.arms,
              score: i.score,
              relevant: provenanceOf(i.beliefId).some((d) => wanted.has(d)),
            })),
            injected: block.items.map((i) => i.beliefId),
            injectedTokens: block.tokens,
          });
        }
        options.onQuestion?.(questions, total);
      }
    }
  } finally {
    await client.close();
  }
  if (options.details) await writeDetails(options.details, details);

  const results: LocomoReport["results"] = {};
  for (const [group, systems] of Object.entries(scores)) {
    results[group] = {
      recall: Object.fromEntries(KS.map((k) => [k, aggregate(systems.recall[k]!)])),
      bm25: Object.fromEntries(KS.map((k) => [k, aggregate(systems.bm25[k]!)])),
    };
  }
  return {
    subjects: options.subjects ?? false,
    semantic: options.semantic
      ? `${options.semantic.id}${options.semanticRanking ? ` (${describeRanking(options.semanticRanking)})` : ""}`
      : null,
    conversations: samples.length,
    beliefs,
    questions,
    skippedQuestions: skipped,
    results,
    tokensPerRecall: tokens.reduce((a, b) => a + b, 0) / Math.max(1, tokens.length),
    latencyMs: { p50: percentile(latencies, 50), p95: percentile(latencies, 95) },
    categories: Object.fromEntries(Object.entries(tallies).map(([g, t]) => [g, reportGroup(t, KS)])),
    injectedCaps,
  };
}

/** One in-turn recall through the real pipeline, drained. */
async function askInTurn(deps: PipelineDeps, principal: { tenantId: string; principalId: string }, sampleId: string, query: RequestedQuery) {
  const gen = recall(deps, {
    principal,
    query,
    kind: "in_turn",
    deadlineAt: Date.now() + 10_000,
    signal: new AbortController().signal,
    context: {
      moment: "in_turn",
      sessionType: "interactive",
      contextWindowTokens: 0,
      snapshotWatermark: null,
      sessionId: `eval/${sampleId}`,
      runId: "",
      turnId: "",
      surface: { surfaceId: "eval", sensitivityCeiling: SENSITIVITY.personal },
    },
  });
  let step = await gen.next();
  while (!step.done) step = await gen.next();
  return step.value;
}

/** The semantic arm over the evaluation's store; its backfill is driven batch by batch, not started. */
async function semanticSearch(client: ReturnType<typeof createPgliteClient>, embedder: Embedder, similarity: SemanticSimilarity, ranking?: SemanticRanking) {
  await enableSemantic(client);
  const semanticStore = new SemanticStore(client, documentWeights(RETRIEVAL_POLICY));
  const backfill = new EmbeddingBackfill(
    semanticStore,
    embedder,
    { batch: 256, pollIntervalMs: 60_000, retryMinMs: 1000, retryMaxMs: 1000, sensitivityCeiling: SENSITIVITY.restricted },
    pino({ level: "silent" }),
  );
  // Each question is asked twice (the ranked list and the injected block): its embedding is computed once.
  return { search: { embedder: withQueryCache(embedder, 64), store: semanticStore, similarity, ...(ranking ? { ranking } : {}) }, backfill };
}

function describeRanking(r: SemanticRanking): string {
  return r.method === "convex" ? `cap ${r.candidateCap}, convex ${r.normalise} (other arms by ${r.lexicalSide ?? "rrf"}), alpha ${r.weight}` : `cap ${r.candidateCap}, rrf weight ${r.weight}`;
}

function inTurnQuery(text: string, subjects: string[], maxItems: number, budgetTokens: number, minScore?: number): RequestedQuery {
  return requestedQuery({ currentScope: "locomo", text, subjects, budgetTokens, maxItems, minScore });
}

/** A plain-text table: one row per group and system, frac/all/noise at each k. */
export function formatLocomoReport(r: LocomoReport): string {
  const pct = (x: number) => (100 * x).toFixed(1).padStart(5);
  const header = `group  system  n     ${KS.map((k) => `frac@${k} all@${k} noise@${k}`).join("  ")}`;
  const rows = Object.entries(r.results)
    .sort(([a], [b]) => (a < b ? -1 : 1))
    .flatMap(([group, systems]) =>
      (["recall", "bm25"] as const).map((system) => {
        const cells = KS.map((k) => {
          const a = systems[system][k]!;
          return `${pct(a.frac)}  ${pct(a.all)}  ${pct(a.noise)}`;
        });
        return `${group.padEnd(6)} ${system.padEnd(7)} ${String(systems[system][5]!.questions).padEnd(5)} ${cells.join("    ")}`;
      }),
    );
  return [
    `LoCoMo retrieval: ${r.conversations} conversations, ${r.beliefs} beliefs, ${r.questions} questions (${r.skippedQuestions} skipped: no evidence)`,
    `item cap ${MAX_ITEMS}, token budget ${BUDGET_TOKENS}, no floor; policy ${RETRIEVAL_POLICY.version}; subjects ${r.subjects ? "from named speakers" : "none (question text only)"}; semantic arm ${r.semantic ?? "off"}`,
    header,
    ...rows,
    `tokens per recall (mean): ${r.tokensPerRecall.toFixed(0)}; recall latency p50 ${r.latencyMs.p50.toFixed(1)} ms, p95 ${r.latencyMs.p95.toFixed(1)} ms (in process, PGlite)`,
    "",
    ...formatBreakdown(r.categories, KS, r.injectedCaps),
  ].join("\n");
}
