import { existsSync } from "node:fs";
import { mkdir, rm } from "node:fs/promises";
import { Progress } from "../cli/progress.js";
import postgres from "postgres";
import { loadMigrations, migrate } from "../store/migrate.js";
import { createPgliteClient, openPglite } from "../store/pglite/pglite-client.js";
import { createPostgresClient } from "../store/postgres/postgres-client.js";
import type { SqlClient } from "../store/sql-client.js";
import { BELIEF_TYPES, OBJECTS, PREDICATES, PROJECTS, QUALIFIERS, SUBJECTS } from "./corpus.js";

/**
 * The benchmark store: N beliefs of one tenant over many principals, a few of
 * them "measured" principals holding a fixed number each (1k, 10k, 100k, and
 * nine more of 10k for the memory figure), generated server-side with
 * generate_series so a million rows take minutes. Each row's principal and
 * fields are hashes of its index and the seed (hashint8extended), so the same
 * parameters give the same table. The measured principals' rows are spread
 * through the insert order and the others' are hashed, so every principal's
 * rows are scattered over the heap as after concurrent writes. The same
 * generator fills an embedded (PGlite) store.
 */

export interface MeasuredPrincipal {
  principal: string;
  beliefs: number;
}

export interface GenerationParams {
  /** Bumped when the generator itself changes, so old databases are regenerated. */
  generator: number;
  beliefs: number;
  /** Principals with an exact number of beliefs; the first is the one most figures are measured on. */
  measured: MeasuredPrincipal[];
  /** Principals sharing the other rows. */
  principals: number;
  seed: number;
  tenant: string;
  /** Fixed time every generated timestamp is relative to. */
  anchor: string;
}

export const GENERATOR_VERSION = 2;

/** The 1M store's measured principals: `heavy` (the main figures), a 1k and a 100k one, and nine more like `heavy`. */
export function measuredPrincipals(heavy = 10_000): MeasuredPrincipal[] {
  return [
    { principal: "heavy", beliefs: heavy },
    { principal: "heavy-1k", beliefs: 1_000 },
    { principal: "heavy-100k", beliefs: 100_000 },
    ...Array.from({ length: 9 }, (_, i) => ({ principal: `heavy-10k-${i + 2}`, beliefs: heavy })),
  ];
}

/**
 * The bench store's database: `--database-url`, else $RECALL_BENCH_DATABASE_URL, else recall_bench on the
 * local server (recall_bench_quick for --quick's smaller store, so neither regenerates the other).
 */
export function benchDatabaseUrl(flag: string | undefined, quick = false): string {
  return flag ?? process.env.RECALL_BENCH_DATABASE_URL ?? `postgres://postgres@127.0.0.1:5432/recall_bench${quick ? "_quick" : ""}`;
}

export function generationParams(overrides: Partial<GenerationParams> = {}): GenerationParams {
  return {
    generator: GENERATOR_VERSION,
    beliefs: 1_000_000,
    measured: measuredPrincipals(),
    principals: 2_000,
    seed: 7,
    tenant: "bench",
    anchor: "2026-01-01T00:00:00Z",
    ...overrides,
  };
}

/**
 * The embedded store: a principal of 50k beliefs and one of 10k (the size of the PostgreSQL store's main
 * principal, so the two stores are compared at the same size) among a few small ones.
 */
export function embeddedGenerationParams(overrides: Partial<GenerationParams> = {}): GenerationParams {
  return generationParams({
    beliefs: 70_000,
    measured: [
      { principal: "heavy", beliefs: 10_000 },
      { principal: "heavy-50k", beliefs: 50_000 },
    ],
    principals: 20,
    ...overrides,
  });
}

/** Stable text form of the parameters, stored with the data and compared on reuse. */
export function paramsKey(p: GenerationParams): string {
  return JSON.stringify(Object.fromEntries(Object.entries(p).sort(([a], [b]) => a.localeCompare(b))));
}

const gcd = (a: number, b: number): number => (b === 0 ? a : gcd(b, a % b));

/**
 * How the measured rows are dealt out. Measured row j (0-based, evenly spaced
 * through the insert order) goes to the principal whose range holds
 * (j · multiplier) mod total: a permutation when the multiplier is coprime to
 * the total, so every principal gets exactly its count, spread over the heap.
 */
export function measuredLayout(measured: readonly MeasuredPrincipal[]): { total: number; multiplier: number; lowerBounds: number[] } {
  const total = measured.reduce((a, m) => a + m.beliefs, 0);
  let multiplier = Math.max(1, Math.floor(total * 0.618));
  while (total > 1 && gcd(multiplier, total) !== 1) multiplier += 1;
  const lowerBounds: number[] = [];
  let at = 0;
  for (const m of measured) {
    lowerBounds.push(at);
    at += m.beliefs;
  }
  return { total, multiplier, lowerBounds };
}

/** Which measured principal measured row j goes to: the same rule as the SQL, for the tests. */
export function measuredOwner(measured: readonly MeasuredPrincipal[], j: number): string {
  const { total, multiplier, lowerBounds } = measuredLayout(measured);
  const p = (j * multiplier) % total;
  let k = 0;
  while (k + 1 < lowerBounds.length && lowerBounds[k + 1]! <= p) k += 1;
  return measured[k]!.principal;
}

/** Rows inserted per statement: progress is reported between them. */
const CHUNK = 100_000;

/** A uniform float in [0, 1) from the row index and a per-field stream: hash bits, not random(). */
const u = (stream: number) => `((hashint8extended(g.i, $3::bigint * 64 + ${stream}) & 1073741823)::float8 / 1073741824)`;

/**
 * The chunk insert. $1..$2 row range, $3 seed, $4 total, $5 measured total, $6 principals, $7 tenant,
 * $8 measured ids, $9 anchor, $10–$15 vocabulary, $16 measured lower bounds, $17 multiplier.
 * Row i is measured when floor(i·M/N) steps; it is then measured row j = floor(i·M/N) − 1.
 */
const INSERT_CHUNK = `
WITH r AS (
  SELECT g.i, ${u(0)} AS u0, ${u(1)} AS u1, ${u(2)} AS u2, ${u(3)} AS u3, ${u(4)} AS u4, ${u(5)} AS u5,
    ${u(6)} AS u6, ${u(7)} AS u7, ${u(8)} AS u8, ${u(9)} AS u9, ${u(10)} AS u10, ${u(11)} AS u11, ${u(12)} AS u12,
    ${u(13)} AS u13, ${u(14)} AS u14
  FROM generate_series($1::bigint, $2::bigint) AS g(i)
), f AS (
  SELECT r.*,
    CASE WHEN (r.i * $5::bigint) / $4::bigint > ((r.i - 1) * $5::bigint) / $4::bigint
         THEN ($8::text[])[width_bucket(((((r.i * $5::bigint) / $4::bigint) - 1) * $17::bigint) % $5::bigint, $16::bigint[])]
         ELSE 'p' || lpad(floor(r.u0 * $6::int)::int::text, 5, '0') END AS principal_id,
    ($10::text[])[1 + floor(r.u1 * r.u1 * array_length($10::text[], 1))::int] AS subject,
    ($11::text[])[1 + floor(r.u2 * array_length($11::text[], 1))::int] AS predicate,
    ($12::text[])[1 + floor(r.u13 * r.u13 * array_length($12::text[], 1))::int] AS object,
    ($13::text[])[1 + floor(r.u14 * array_length($13::text[], 1))::int] AS qualifier,
    ($14::text[])[1 + floor(r.u3 * array_length($14::text[], 1))::int] AS belief_type,
    CASE WHEN r.u4 < 0.85 THEN 'active' WHEN r.u4 < 0.90 THEN 'provisional' WHEN r.u4 < 0.97 THEN 'superseded' ELSE 'expired' END AS status,
    $9::timestamptz - make_interval(secs => r.u10 * 730 * 86400) AS valid_from
  FROM r
)
INSERT INTO beliefs (tenant_id, principal_id, belief_id, subject, statement, belief_type, status, confidence, authority,
  origin_scope, scope_level, portability, sensitivity, valid_from, valid_to, recorded_at, evidence_count,
  last_evidence_at, expires_hint, store_position)
SELECT $7::text, f.principal_id, md5($3::text || ':' || f.i)::uuid, f.subject,
  f.subject || ' ' || f.predicate || ' ' || f.object || ' ' || f.qualifier || '.',
  f.belief_type, f.status, round((0.3 + 0.7 * f.u5)::numeric, 2)::float8,
  CASE WHEN f.u6 < 0.2 THEN 'user' WHEN f.u6 < 0.5 THEN 'affirmed' ELSE 'inferred' END,
  ($15::text[])[1 + floor(f.u7 * array_length($15::text[], 1))::int],
  CASE WHEN f.u8 < 0.7 THEN 'project' WHEN f.u8 < 0.95 THEN 'user' ELSE 'global' END,
  CASE WHEN f.u9 < 0.4 THEN 'portable' WHEN f.u9 < 0.8 THEN 'contextual' ELSE 'local' END,
  CASE WHEN f.u11 < 0.6 THEN 1 WHEN f.u11 < 0.95 THEN 2 ELSE 3 END,
  f.valid_from,
  CASE WHEN f.status IN ('superseded', 'expired') THEN f.valid_from + make_interval(days => 30 + floor(f.u12 * 200)::int) END,
  f.valid_from,
  1 + floor(f.u12 * 12)::int,
  f.valid_from + ($9::timestamptz - f.valid_from) * f.u12,
  CASE WHEN f.belief_type IN ('status', 'event') THEN f.valid_from + interval '30 days' END,
  f.i
FROM f`;

export interface PreparedStore {
  reused: boolean;
  /** Seconds spent generating (0 when reused). */
  generationSeconds: number;
  /** Each measured principal's store head: the snapshot watermark its in-turn recalls send. */
  heads: Map<string, number>;
}

/**
 * Makes sure `url` names a database holding exactly the data `params`
 * describe: reused when its recorded parameters match, otherwise (or with
 * `force`) dropped and generated again. A database that exists but was not
 * made by this benchmark is never dropped without `force`.
 */
export async function prepareStore(
  url: string,
  params: GenerationParams,
  options: { force: boolean; log: (line: string) => void },
): Promise<PreparedStore> {
  const { log } = options;
  const name = new URL(url).pathname.slice(1);
  if (!/^[a-z_][a-z0-9_]*$/.test(name)) throw new Error(`bench database name "${name}" must be a plain lower-case identifier`);
  const admin = postgres(adminUrl(url), { max: 1, onnotice: () => {} });
  try {
    const exists = (await admin`SELECT 1 FROM pg_database WHERE datname = ${name}`).length > 0;
    let reusable = false;
    if (exists && !options.force) {
      const client = createPostgresClient(url, 1);
      const recorded = await recordedParams(client).finally(() => client.close());
      if (recorded === paramsKey(params)) reusable = true;
      else if (recorded === null) {
        throw new Error(`database "${name}" exists and was not generated by the benchmark; pass --regenerate to drop it`);
      } else log(`database "${name}" holds other generation parameters: regenerating`);
    }
    if (!reusable) {
      if (exists) await admin.unsafe(`DROP DATABASE ${name} WITH (FORCE)`);
      await admin.unsafe(`CREATE DATABASE ${name}`);
    }
    // One connection, so the session settings of the load hold for all of it.
    const client = createPostgresClient(url, 1);
    try {
      return await fill(client, params, reusable, `database "${name}"`, log);
    } finally {
      await client.close();
    }
  } finally {
    await admin.end({ timeout: 5 });
  }
}

/** The same for an embedded (PGlite) data directory: reused when its parameters match, else emptied and generated. */
export async function prepareEmbeddedStore(
  dataDir: string,
  params: GenerationParams,
  options: { force: boolean; log: (line: string) => void },
): Promise<PreparedStore> {
  let reusable = false;
  if (existsSync(dataDir) && !options.force) {
    const client = createPgliteClient(await openPglite(dataDir));
    const recorded = await recordedParams(client).finally(() => client.close());
    if (recorded === paramsKey(params)) reusable = true;
    else if (recorded === null) throw new Error(`${dataDir} holds a store the benchmark did not generate; pass --regenerate to replace it`);
  }
  if (!reusable) {
    await rm(dataDir, { recursive: true, force: true });
    await mkdir(dataDir, { recursive: true });
  }
  const client = createPgliteClient(await openPglite(dataDir));
  try {
    return await fill(client, params, reusable, `embedded store ${dataDir}`, options.log);
  } finally {
    await client.close();
  }
}

async function fill(db: SqlClient, params: GenerationParams, reusable: boolean, what: string, log: (line: string) => void): Promise<PreparedStore> {
  const applied = await migrate(db, await loadMigrations());
  let generationSeconds = 0;
  if (reusable) {
    log(`reusing ${what} (${params.beliefs} beliefs, seed ${params.seed})`);
    if (applied.length > 0) {
      log(`applied migrations ${applied.join(", ")} to the reused store; analysing`);
      await db.exec("ANALYZE");
    }
  } else {
    const started = performance.now();
    await generate(db, params, log);
    generationSeconds = (performance.now() - started) / 1000;
  }
  // Each run starts with no traces, so runs do not measure each other's leftovers.
  await db.exec("TRUNCATE recall_traces, recalled_events, citations, rederivation_hints");
  const rows = await db.query<{ principal_id: string; position: number }>(
    "SELECT principal_id, position FROM principal_heads WHERE tenant_id = $1 AND principal_id = ANY($2::text[])",
    [params.tenant, params.measured.map((m) => m.principal)],
  );
  return { reused: reusable, generationSeconds, heads: new Map(rows.map((r) => [r.principal_id, Number(r.position)])) };
}

async function generate(db: SqlClient, params: GenerationParams, log: (line: string) => void): Promise<void> {
  const layout = measuredLayout(params.measured);
  if (layout.total > params.beliefs) throw new Error(`the measured principals hold ${layout.total} beliefs, more than the ${params.beliefs} generated`);
  if (db.kind === "postgres") {
    await db.exec("SET maintenance_work_mem = '512MB'");
    await db.exec("SET synchronous_commit = off");
  }
  // Indexes are built once after the load, far faster than maintained row by row;
  // their definitions are read back from the catalogue, so they stay the migrations' own.
  const indexes = await db.query<{ indexname: string; indexdef: string }>(
    `SELECT indexname, indexdef FROM pg_indexes
     WHERE schemaname = current_schema() AND tablename = 'beliefs' AND indexname <> 'beliefs_pkey'`,
  );
  for (const ix of indexes) await db.exec(`DROP INDEX ${ix.indexname}`);
  const progress = new Progress({ label: "bench: generating", unit: "beliefs", total: params.beliefs });
  for (let lo = 1; lo <= params.beliefs; lo += CHUNK) {
    const hi = Math.min(params.beliefs, lo + CHUNK - 1);
    await db.query(INSERT_CHUNK, [
      lo,
      hi,
      params.seed,
      params.beliefs,
      layout.total,
      params.principals,
      params.tenant,
      params.measured.map((m) => m.principal),
      params.anchor,
      SUBJECTS,
      PREDICATES,
      OBJECTS,
      QUALIFIERS,
      BELIEF_TYPES,
      PROJECTS,
      layout.lowerBounds,
      layout.multiplier,
    ]);
    progress.tick(hi - lo + 1);
  }
  progress.done();
  log(`generated ${params.beliefs.toLocaleString("en-US")} beliefs`);
  for (const ix of indexes) {
    log(`building ${ix.indexname}`);
    await db.exec(ix.indexdef);
  }
  await db.query(
    `INSERT INTO principal_heads (tenant_id, principal_id, position, updated_at)
     SELECT tenant_id, principal_id, max(store_position), $1::timestamptz FROM beliefs GROUP BY tenant_id, principal_id`,
    [params.anchor],
  );
  // The store keeps these in its write transactions (store/beliefs/lexicon-stats.ts); a bulk load counts them once.
  await db.exec(
    `INSERT INTO principal_lexicon (tenant_id, principal_id, docs, len_a, len_b, len_c, len_d)
     SELECT tenant_id, principal_id, count(*), sum(lex_lengths[1]), sum(lex_lengths[2]), sum(lex_lengths[3]), sum(lex_lengths[4])
     FROM beliefs GROUP BY tenant_id, principal_id`,
  );
  log("vacuum analyse");
  await db.exec("VACUUM ANALYZE beliefs");
  await db.exec("ANALYZE principal_heads");
  await db.exec("CREATE TABLE bench_generation (params text NOT NULL, generated_at timestamptz NOT NULL DEFAULT now())");
  await db.query("INSERT INTO bench_generation (params) VALUES ($1)", [paramsKey(params)]);
}

/** The recorded parameters, or null when the store was not made by the benchmark ("" when it is empty). */
async function recordedParams(db: SqlClient): Promise<string | null> {
  const [table] = await db.query<{ present: boolean }>("SELECT to_regclass('bench_generation') IS NOT NULL AS present");
  if (!table?.present) {
    const [beliefs] = await db.query<{ present: boolean }>("SELECT to_regclass('beliefs') IS NOT NULL AS present");
    // An empty database (no schema yet) is fine to generate into.
    return beliefs?.present ? null : "";
  }
  const rows = await db.query<{ params: string }>("SELECT params FROM bench_generation");
  return rows[0]?.params ?? "";
}

/** The same server's maintenance database, to create and drop the bench database from. */
function adminUrl(url: string): string {
  const admin = new URL(url);
  admin.pathname = "/postgres";
  return admin.toString();
}
