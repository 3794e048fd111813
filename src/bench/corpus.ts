/**
 * The benchmark's fixed vocabulary and its seeded text generators. The
 * statements themselves are generated server-side from these lists
 * (bench/generate.ts); the query texts are generated here from the same
 * words, so queries match a realistic share of the rows. Everything is a pure
 * function of the seed, so two runs ask the same questions of the same data.
 */

/** mulberry32: a small, fast, well-distributed 32-bit PRNG; returns floats in [0, 1). */
export function seededRandom(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** One element, uniformly. */
export function pick<T>(random: () => number, items: readonly T[]): T {
  return items[Math.floor(random() * items.length)]!;
}

/** One element, skewed toward the front (as word use is): index = n·u². */
export function pickSkewed<T>(random: () => number, items: readonly T[]): T {
  const u = random();
  return items[Math.floor(items.length * u * u)]!;
}

/** People, projects, services and tools beliefs are about. */
export const SUBJECTS: readonly string[] = [
  "User", "Andy", "Maria", "Chen", "Priya", "Tomasz", "Aisha", "Kenji", "Sofia", "Lucas", "Fatima", "Oliver",
  "veetbot", "atlas", "billing service", "search indexer", "mobile app", "data pipeline", "auth gateway",
  "release process", "design system", "onboarding flow", "analytics dashboard", "payments API", "notification worker",
  "Kubernetes", "PostgreSQL", "Redis", "Kafka", "Terraform", "GitHub Actions", "Grafana", "Sentry", "Helix",
  "the staging cluster", "the on-call rota", "the quarterly roadmap", "the incident review", "the team", "the budget",
];

/** What a statement says of its subject. */
export const PREDICATES: readonly string[] = [
  "prefers", "uses", "deploys to", "depends on", "owns", "maintains", "migrated to", "is blocked by", "runs on",
  "reviews", "dislikes", "works with", "stores data in", "schedules", "tests with", "monitors", "replaced",
  "is moving to", "documents", "caches results in",
];

/** Objects of a statement, most common first (picked with a skew). */
export const OBJECTS: readonly string[] = [
  "Kubernetes", "PostgreSQL", "TypeScript", "Rust", "Python", "Go", "Fly.io", "AWS Lambda", "Google Cloud Run",
  "the staging cluster", "the production cluster", "weekly releases", "feature flags", "canary deploys",
  "blue-green deploys", "nightly backups", "pgvector embeddings", "Redis queues", "Kafka topics", "S3 buckets",
  "concise prose", "bullet-point summaries", "dark mode", "vim keybindings", "the Helix editor", "VS Code",
  "pair programming", "code review before merge", "trunk-based development", "semantic versioning",
  "integration tests", "property-based tests", "load tests", "contract tests", "snapshot tests",
  "Grafana dashboards", "Prometheus alerts", "Sentry error tracking", "OpenTelemetry traces", "structured logs",
  "the billing database", "the search index", "the mobile backend", "the auth gateway", "the payments API",
  "GraphQL", "gRPC", "REST endpoints", "WebSockets", "server-sent events",
  "Terraform modules", "Helm charts", "Docker images", "GitHub Actions runners", "self-hosted runners",
  "morning standups", "async updates", "written design docs", "architecture decision records", "quarterly planning",
  "European hours", "Berlin", "Lisbon", "Tokyo", "San Francisco", "remote work", "the office on Fridays",
  "espresso", "green tea", "cycling to work", "running on weekends", "jazz while coding", "mechanical keyboards",
  "SQLite for prototypes", "DuckDB for analytics", "Parquet files", "CSV exports", "JSON schemas",
  "rate limiting", "connection pooling", "read replicas", "sharding by tenant", "row-level security",
  "OAuth tokens", "short-lived credentials", "secret rotation", "audit logs", "data retention rules",
  "the Q3 roadmap", "the migration plan", "the incident runbook", "the on-call handbook", "the style guide",
  "Node 20", "Node 22", "Python 3.12", "Java 21", "Kotlin", "Swift", "React Native", "Next.js", "Svelte", "htmx",
];

/** How a statement ends: when, where, why. */
export const QUALIFIERS: readonly string[] = [
  "since March", "since the last release", "on weekdays", "for the billing service", "after CI passes on main",
  "when on call", "for production workloads", "for internal tools", "during the migration", "until the end of the quarter",
  "because of latency", "because of cost", "for compliance reasons", "at the team's request", "for new services only",
  "in the EU region", "in the US region", "for customer-facing features", "for experiments", "with some reluctance",
  "as a temporary workaround", "by default", "whenever possible", "for large datasets", "for small teams",
];

export const BELIEF_TYPES: readonly string[] = [
  "preference", "user_model_attr", "relationship", "working_style", "constraint", "skill", "decision", "project_fact",
  "status", "event",
];

export const PROJECTS: readonly string[] = ["veetbot", "atlas", "billing", "search", "mobile", "platform", "data", "infra"];

/** Query shapes an agent runtime sends: objective, open question, message. */
const QUERY_TEMPLATES: readonly string[] = [
  "How do we {verb} {object}?",
  "What does {subject} think about {object}?",
  "Which {object2} should we use for {subject}?",
  "Remind me why {subject} {predicate} {object}.",
  "Is {subject} still {predicate} {object} {qualifier}?",
  "Help me plan the move from {object} to {object2} for {subject}.",
  "What did we decide about {object} {qualifier}?",
  "Can you summarise what we know about {subject} and {object}?",
  "Fix the failing deploy of {subject}; it {predicate} {object}.",
  "Draft a note to {person} about {object} and {object2}.",
];

const VERBS: readonly string[] = ["deploy", "test", "monitor", "migrate", "configure", "document", "secure", "scale", "back up", "review"];
const PEOPLE: readonly string[] = SUBJECTS.slice(1, 12);

export interface BenchQuery {
  text: string;
  /** Entities in play, as a runtime passes them (sometimes none). */
  subjects: string[];
}

/** `count` varied in-turn query texts, a pure function of the seed. */
export function queryTexts(seed: number, count: number): BenchQuery[] {
  const random = seededRandom(seed);
  const queries: BenchQuery[] = [];
  for (let i = 0; i < count; i += 1) {
    const subject = pick(random, SUBJECTS);
    const fill: Record<string, string> = {
      subject,
      person: pick(random, PEOPLE),
      verb: pick(random, VERBS),
      predicate: pick(random, PREDICATES),
      object: pickSkewed(random, OBJECTS),
      object2: pickSkewed(random, OBJECTS),
      qualifier: pick(random, QUALIFIERS),
    };
    const text = pick(random, QUERY_TEMPLATES).replace(/\{(\w+)\}/g, (_, key: string) => fill[key]!);
    // About a third of turns name the entity in play, as runtimes do when they track one.
    queries.push({ text, subjects: random() < 1 / 3 ? [subject] : [] });
  }
  return queries;
}

/** Session-opening goals for snapshots: shorter, about a project. */
export function openingGoals(seed: number, count: number): string[] {
  const random = seededRandom(seed ^ 0x5eed);
  return Array.from({ length: count }, () => `Continue the work on ${pick(random, PROJECTS)}: ${pick(random, VERBS)} ${pickSkewed(random, OBJECTS)}.`);
}
