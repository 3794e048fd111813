import { Progress } from "../cli/progress.js";
import postgres from "postgres";
import { createPostgresClient } from "../store/postgres-client.js";
import { loadMigrations, migrate } from "../store/migrate.js";
import { BELIEF_TYPES, OBJECTS, PREDICATES, PROJECTS, QUALIFIERS, SUBJECTS } from "./corpus.js";

/**
 * The benchmark store: N beliefs of one tenant over many principals, one of
 * them (the "heavy" principal) holding H, generated server-side with
 * generate_series so a million rows take minutes. Each row's principal and
 * fields are hashes of its index and the seed (hashint8extended), so the same
 * parameters give the same table. The heavy principal's rows are spread evenly
 * through the insert order and the others' are hashed, so every principal's
 * rows are scattered over the heap as after concurrent writes.
 */

export interface GenerationParams {
  /** Bumped when the generator itself changes, so old databases are regenerated. */
  generator: number;
  beliefs: number;
  heavyBeliefs: number;
  /** Principals sharing the other rows. */
  principals: number;
  seed: number;
  tenant: string;
  heavyPrincipal: string;
  /** Fixed time every generated timestamp is relative to. */
  anchor: string;
}

export const GENERATOR_VERSION = 1;

export function generationParams(overrides: Partial<GenerationParams> = {}): GenerationParams {
  return {
    generator: GENERATOR_VERSION,
    beliefs: 1_000_000,
    heavyBeliefs: 10_000,
    principals: 2_000,
    seed: 7,
    tenant: "bench",
    heavyPrincipal: "heavy",
    anchor: "2026-01-01T00:00:00Z",
    ...overrides,
  };
}

/** Stable text form of the parameters, stored with the data and compared on reuse. */
export function paramsKey(p: GenerationParams): string {
  return JSON.stringify(Object.fromEntries(Object.entries(p).sort(([a], [b]) => a.localeCompare(b))));
}

/** Rows inserted per statement: progress is reported between them. */
const CHUNK = 100_000;

/** A uniform float in [0, 1) from the row index and a per-field stream: hash bits, not random(). */
const u = (stream: number) => `((hashint8extended(g.i, $3::bigint * 64 + ${stream}) & 1073741823)::float8 / 1073741824)`;

/** The chunk insert. $1..$2 row range, $3 seed, $4 total, $5 heavy count, $6 principals, $7 tenant, $8 heavy id, $9 anchor. */
const INSERT_CHUNK = `
WITH r AS (
  SELECT g.i, ${u(0)} AS u0, ${u(1)} AS u1, ${u(2)} AS u2, ${u(3)} AS u3, ${u(4)} AS u4, ${u(5)} AS u5,
    ${u(6)} AS u6, ${u(7)} AS u7, ${u(8)} AS u8, ${u(9)} AS u9, ${u(10)} AS u10, ${u(11)} AS u11, ${u(12)} AS u12,
    ${u(13)} AS u13, ${u(14)} AS u14
  FROM generate_series($1::bigint, $2::bigint) AS g(i)
), f AS (
  SELECT r.*,
    -- Exactly $5 rows, evenly spaced: row i is the heavy principal's when floor(i·H/N) steps.
    CASE WHEN (r.i * $5::bigint) / $4::bigint > ((r.i - 1) * $5::bigint) / $4::bigint THEN $8::text
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
  /** The heavy principal's store head: the snapshot watermark in-turn recalls send. */
  heavyHead: number;
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
      const recorded = await recordedParams(url);
      if (recorded === paramsKey(params)) reusable = true;
      else if (recorded === null) {
        throw new Error(`database "${name}" exists and was not generated by the benchmark; pass --regenerate to drop it`);
      } else log(`database "${name}" holds other generation parameters: regenerating`);
    }
    if (!reusable) {
      if (exists) await admin.unsafe(`DROP DATABASE ${name} WITH (FORCE)`);
      await admin.unsafe(`CREATE DATABASE ${name}`);
    }
    const applied = await migrateBench(url);
    const sql = postgres(url, { max: 1, onnotice: () => {} });
    try {
      let generationSeconds = 0;
      if (reusable) {
        log(`reusing database "${name}" (${params.beliefs} beliefs, seed ${params.seed})`);
        if (applied.length > 0) {
          log(`applied migrations ${applied.join(", ")} to the reused database; analysing`);
          await sql`ANALYZE`;
        }
      } else {
        const started = performance.now();
        await generate(sql, params, log);
        generationSeconds = (performance.now() - started) / 1000;
      }
      // Each run starts with no traces, so runs do not measure each other's leftovers.
      await sql`TRUNCATE recall_traces, recalled_events, citations, rederivation_hints`;
      const head = await sql<{ position: string }[]>`
        SELECT position FROM principal_heads WHERE tenant_id = ${params.tenant} AND principal_id = ${params.heavyPrincipal}`;
      return { reused: reusable, generationSeconds, heavyHead: Number(head[0]?.position ?? 0) };
    } finally {
      await sql.end({ timeout: 5 });
    }
  } finally {
    await admin.end({ timeout: 5 });
  }
}

async function generate(sql: postgres.Sql, params: GenerationParams, log: (line: string) => void): Promise<void> {
  await sql`SET maintenance_work_mem = '512MB'`;
  await sql`SET synchronous_commit = off`;
  // Indexes are built once after the load, far faster than maintained row by row;
  // their definitions are read back from the catalogue, so they stay the migrations' own.
  const indexes = await sql<{ indexname: string; indexdef: string }[]>`
    SELECT indexname, indexdef FROM pg_indexes
    WHERE schemaname = current_schema() AND tablename = 'beliefs' AND indexname <> 'beliefs_pkey'`;
  for (const ix of indexes) await sql.unsafe(`DROP INDEX ${ix.indexname}`);
  const progress = new Progress({ label: "bench: generating", unit: "beliefs", total: params.beliefs });
  for (let lo = 1; lo <= params.beliefs; lo += CHUNK) {
    const hi = Math.min(params.beliefs, lo + CHUNK - 1);
    await sql.unsafe(INSERT_CHUNK, [
      lo,
      hi,
      params.seed,
      params.beliefs,
      params.heavyBeliefs,
      params.principals,
      params.tenant,
      params.heavyPrincipal,
      params.anchor,
      SUBJECTS as string[],
      PREDICATES as string[],
      OBJECTS as string[],
      QUALIFIERS as string[],
      BELIEF_TYPES as string[],
      PROJECTS as string[],
    ]);
    progress.tick(hi - lo + 1);
  }
  progress.done();
  log(`generated ${params.beliefs.toLocaleString("en-US")} beliefs`);
  for (const ix of indexes) {
    log(`building ${ix.indexname}`);
    await sql.unsafe(ix.indexdef);
  }
  await sql.unsafe(
    `INSERT INTO principal_heads (tenant_id, principal_id, position, updated_at)
     SELECT tenant_id, principal_id, max(store_position), $1::timestamptz FROM beliefs GROUP BY tenant_id, principal_id`,
    [params.anchor],
  );
  // The store keeps these in its write transactions (store/lexicon-stats.ts); a bulk load counts them once.
  await sql.unsafe(
    `INSERT INTO principal_lexicon (tenant_id, principal_id, docs, len_a, len_b, len_c, len_d)
     SELECT tenant_id, principal_id, count(*), sum(lex_lengths[1]), sum(lex_lengths[2]), sum(lex_lengths[3]), sum(lex_lengths[4])
     FROM beliefs GROUP BY tenant_id, principal_id`,
  );
  log("vacuum analyse");
  await sql`VACUUM ANALYZE beliefs`;
  await sql`ANALYZE principal_heads`;
  await sql`CREATE TABLE bench_generation (params text NOT NULL, generated_at timestamptz NOT NULL DEFAULT now())`;
  await sql`INSERT INTO bench_generation (params) VALUES (${paramsKey(params)})`;
}

/** The recorded parameters, or null when the database was not made by the benchmark. */
async function recordedParams(url: string): Promise<string | null> {
  const sql = postgres(url, { max: 1, onnotice: () => {} });
  try {
    const table = await sql`SELECT to_regclass('bench_generation') IS NOT NULL AS present`;
    if (!table[0]?.present) {
      const beliefs = await sql`SELECT to_regclass('beliefs') IS NOT NULL AS present`;
      // An empty database (no schema yet) is fine to generate into.
      return beliefs[0]?.present ? null : "";
    }
    const rows = await sql<{ params: string }[]>`SELECT params FROM bench_generation`;
    return rows[0]?.params ?? "";
  } finally {
    await sql.end({ timeout: 5 });
  }
}

async function migrateBench(url: string): Promise<number[]> {
  const client = createPostgresClient(url, 1);
  try {
    return await migrate(client, await loadMigrations());
  } finally {
    await client.close();
  }
}

/** The same server's maintenance database, to create and drop the bench database from. */
function adminUrl(url: string): string {
  const admin = new URL(url);
  admin.pathname = "/postgres";
  return admin.toString();
}
