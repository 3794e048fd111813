import { randomUUID } from "node:crypto";
import { mkdtemp, rm, stat, writeFile } from "node:fs/promises";
import * as http2 from "node:http2";
import * as net from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import postgres from "postgres";
import { connectBench } from "./grpc-client.js";
import { rssMiB, startSidecar, type SidecarProcess } from "./sidecar-process.js";

/**
 * Issue 38's figures, repeatable (127.0.0.1 only, bounded in count and time):
 *
 *   node dist/bench/hostile.js [--blackhole-s 600] [--reads-per-s 20] [--database-url postgres://…]
 *
 * 1. RSS of the sidecar under 300 concurrent 3.9 MB Search requests over
 *    three HTTP/2 connections: before, peak (VmHWM), and 10 s after.
 * 2. Shutdown time (SIGTERM to exit) with a client connected that never
 *    finishes an over-limit request.
 * 3. A PostgreSQL blackhole (a proxy that stops forwarding, connections kept
 *    open) under a steady read load: reads answered and failed, traces
 *    spooled and replayed (the writer's counters), traces lost (ids handed
 *    out that are not in PostgreSQL afterwards: must be 0), and the time from
 *    recovery to an empty spool. Needs PostgreSQL (RECALL_TEST_DATABASE_URL
 *    or --database-url, a database it may create tables in).
 */

const MB = 1024 * 1024;
const args = new Map<string, string>();
for (let i = 2; i < process.argv.length; i += 2) args.set(process.argv[i]!.replace(/^--/, ""), process.argv[i + 1] ?? "");
const BLACKHOLE_S = Number(args.get("blackhole-s") ?? 600);
const READS_PER_S = Number(args.get("reads-per-s") ?? 20);
const DATABASE_URL = args.get("database-url") ?? process.env.RECALL_TEST_DATABASE_URL;

const delay = (ms: number) => new Promise((r) => setTimeout(r, ms));

function envelope(payload: Buffer): Buffer {
  const head = Buffer.alloc(5);
  head.writeUInt32BE(payload.length, 1);
  return Buffer.concat([head, payload]);
}

/** A Search request whose text (field 1) is `bytes` long: refused INVALID_ARGUMENT once read. */
function bigSearch(bytes: number): Buffer {
  const text = Buffer.alloc(bytes, "a");
  const len: number[] = [];
  for (let v = bytes; ; v >>>= 7) {
    if (v < 0x80) {
      len.push(v);
      break;
    }
    len.push((v & 0x7f) | 0x80);
  }
  return envelope(Buffer.concat([Buffer.from([0x0a, ...len]), text]));
}

function rawSearch(session: http2.ClientHttp2Session, body: Buffer, end = true): Promise<number | undefined> {
  return new Promise((resolve) => {
    const stream = session.request({
      ":method": "POST",
      ":path": "/memory.v1.MemoryService/Search",
      "content-type": "application/grpc",
      te: "trailers",
      "x-tenant-id": "bench",
      "x-principal-id": "bench",
    });
    let status: number | undefined;
    const take = (h: http2.IncomingHttpHeaders) => {
      if (h["grpc-status"] !== undefined) status = Number(h["grpc-status"]);
    };
    stream.on("response", take);
    stream.on("trailers", take);
    stream.on("data", () => {});
    stream.on("error", () => {});
    stream.on("close", () => resolve(status));
    if (end) stream.end(body);
    else stream.write(body);
  });
}

async function requestMemory(): Promise<void> {
  const dataDir = await mkdtemp(join(tmpdir(), "recall-hostile-"));
  const sidecar = await startSidecar({ RECALL_DATA_DIR: dataDir, RECALL_ALLOW_UNVERIFIED_IDENTITY: "true" });
  try {
    const pid = sidecar.child.pid!;
    await delay(2000);
    const before = await rssMiB(pid, "now");
    // The high-water mark from here on, not from start-up (PGlite's load): "5" resets VmHWM.
    await writeFile(`/proc/${pid}/clear_refs`, "5").catch(() => {});
    const body = bigSearch(3_900_000);
    const sessions = Array.from({ length: 3 }, () => {
      const s = http2.connect(`http://${sidecar.address}`, { maxSessionMemory: 2048 });
      s.on("error", () => {});
      return s;
    });
    const started = performance.now();
    const statuses = await Promise.all(sessions.flatMap((s) => Array.from({ length: 100 }, () => rawSearch(s, body))));
    const tookMs = performance.now() - started;
    const peak = await rssMiB(pid, "peak");
    for (const s of sessions) s.destroy();
    await delay(10_000);
    const after = await rssMiB(pid, "now");
    const byStatus = new Map<string, number>();
    for (const st of statuses) byStatus.set(String(st), (byStatus.get(String(st)) ?? 0) + 1);
    console.log(
      JSON.stringify({
        figure: "rss under 300 concurrent 3.9 MB requests over 3 connections",
        rssBeforeMiB: round(before),
        rssPeakMiB: round(peak),
        rssAfter10sMiB: round(after),
        tookMs: Math.round(tookMs),
        statuses: Object.fromEntries(byStatus),
      }),
    );
  } finally {
    await sidecar.stop();
    await rm(dataDir, { recursive: true, force: true });
  }
}

async function shutdownWithOverLimitClient(): Promise<void> {
  const dataDir = await mkdtemp(join(tmpdir(), "recall-hostile-"));
  const sidecar = await startSidecar({ RECALL_DATA_DIR: dataDir, RECALL_ALLOW_UNVERIFIED_IDENTITY: "true" });
  const session = http2.connect(`http://${sidecar.address}`, { maxSessionMemory: 2048 });
  session.on("error", () => {});
  try {
    // Announces 8 MB (over the 4 MiB message limit), sends 1 KB, never finishes.
    const head = Buffer.alloc(5 + 1024);
    head.writeUInt32BE(8 * MB, 1);
    const refused = rawSearch(session, head, false);
    // And 4.2 MB sent in full, twice.
    const big = bigSearch(4_200_000);
    await Promise.all([refused, rawSearch(session, big), rawSearch(session, big)]);
    const started = performance.now();
    await sidecar.stop();
    console.log(JSON.stringify({ figure: "shutdown with an over-limit client connected", shutdownMs: Math.round(performance.now() - started), graceMs: 10_000, cutOff: sidecar.tail().includes("grace period expired") }));
  } finally {
    session.destroy();
    await rm(dataDir, { recursive: true, force: true });
  }
}

/** A TCP proxy to PostgreSQL that can stop forwarding (a blackhole) and reset what it held. */
class BlackholeProxy {
  private readonly pairs = new Set<[net.Socket, net.Socket]>();
  private holding = false;
  private server!: net.Server;
  port = 0;

  constructor(private readonly target: { host: string; port: number }) {}

  async listen(): Promise<void> {
    this.server = net.createServer((client) => {
      const upstream = net.connect(this.target.port, this.target.host);
      const pair: [net.Socket, net.Socket] = [client, upstream];
      this.pairs.add(pair);
      for (const s of pair) {
        s.on("error", () => pair.forEach((x) => x.destroy()));
        s.once("close", () => {
          pair.forEach((x) => x.destroy());
          this.pairs.delete(pair);
        });
      }
      if (this.holding) pair.forEach((s) => s.pause());
      else this.forward(pair);
    });
    await new Promise<void>((resolve) => this.server.listen(0, "127.0.0.1", resolve));
    this.port = (this.server.address() as net.AddressInfo).port;
  }

  blackhole(): void {
    this.holding = true;
    for (const [client, upstream] of this.pairs) {
      client.unpipe(upstream);
      upstream.unpipe(client);
      client.pause();
      upstream.pause();
    }
  }

  /** Forwarding again; the connections held through the blackhole are reset, as a stateful firewall would. */
  restore(): void {
    this.holding = false;
    for (const pair of this.pairs) pair.forEach((s) => s.destroy());
  }

  close(): void {
    for (const pair of this.pairs) pair.forEach((s) => s.destroy());
    this.server.close();
  }

  private forward([client, upstream]: [net.Socket, net.Socket]): void {
    client.pipe(upstream);
    upstream.pipe(client);
  }
}

async function writerCounts(address: string): Promise<Record<string, number>> {
  const text = await (await fetch(`http://${address}/metrics`)).text();
  const out: Record<string, number> = {};
  for (const m of text.matchAll(/^recall_trace_writes_total\{outcome="(\w+)"\} (\d+)/gm)) out[m[1]!] = Number(m[2]);
  return out;
}

async function blackhole(): Promise<void> {
  if (!DATABASE_URL) {
    console.log(JSON.stringify({ figure: "postgres blackhole", skipped: "no RECALL_TEST_DATABASE_URL / --database-url" }));
    return;
  }
  const admin = postgres(DATABASE_URL, { max: 1, onnotice: () => {} });
  const dbName = `recall_hostile_bench_${randomUUID().slice(0, 8)}`;
  await admin.unsafe(`CREATE DATABASE ${dbName}`);
  const dbUrl = new URL(DATABASE_URL);
  dbUrl.pathname = `/${dbName}`;
  const proxy = new BlackholeProxy({ host: dbUrl.hostname, port: Number(dbUrl.port || 5432) });
  await proxy.listen();
  const viaProxy = new URL(dbUrl);
  viaProxy.hostname = "127.0.0.1";
  viaProxy.port = String(proxy.port);
  const dataDir = await mkdtemp(join(tmpdir(), "recall-hostile-"));
  let sidecar: SidecarProcess | undefined;
  try {
    sidecar = await startSidecar({
      RECALL_DATABASE_URL: viaProxy.toString(),
      RECALL_DATA_DIR: dataDir,
      RECALL_ALLOW_UNVERIFIED_IDENTITY: "true",
    });
    const identity = { tenant: "bench", principal: `p-${randomUUID().slice(0, 8)}` };
    const beliefs = Array.from({ length: 50 }, (_, i) => ({
      beliefId: randomUUID(),
      subject: i % 2 ? "veetbot" : "Andy",
      statement: i % 2 ? `veetbot deploys service ${i} to Fly.io with blue-green rollouts.` : `Andy prefers concise writing, note ${i}.`,
      beliefType: i % 2 ? "project_fact" : "preference",
      status: "BELIEF_STATUS_ACTIVE",
      confidence: 0.9,
      authority: "AUTHORITY_USER",
      originScope: "veetbot",
      scopeLevel: "SCOPE_LEVEL_USER",
      portability: "PORTABILITY_PORTABLE",
      recordedAt: "2026-01-01T00:00:00Z",
    }));
    const put = await fetch(`http://${sidecar.address}/memory.v1.MemoryWriteService/PutBeliefs`, {
      method: "POST",
      headers: { "content-type": "application/json", "connect-protocol-version": "1", "x-tenant-id": identity.tenant, "x-principal-id": identity.principal },
      body: JSON.stringify({ beliefs }),
    });
    if (!put.ok) throw new Error(`PutBeliefs: ${put.status} ${await put.text()}`);
    const client = connectBench(sidecar.address, identity, 2000);
    for (let i = 0; i < 5; i++) await client.search({ text: "how does veetbot deploy" });
    await delay(1000);

    const handedOut: string[] = [];
    let answered = 0;
    let failed = 0;
    const failures = new Map<string, number>();
    let running = true;
    const load = (async () => {
      const interval = 1000 / READS_PER_S;
      let next = performance.now();
      while (running) {
        next += interval;
        void client.search({ text: "how does veetbot deploy" }).then(
          (result) => {
            answered += 1;
            handedOut.push(String(result.trace_id));
          },
          (err: { code?: number }) => {
            failed += 1;
            failures.set(String(err.code), (failures.get(String(err.code)) ?? 0) + 1);
          },
        );
        await delay(Math.max(0, next - performance.now()));
      }
    })();

    await delay(5000);
    const atStart = { answered, failed };
    proxy.blackhole();
    await delay(BLACKHOLE_S * 1000);
    const during = { answered: answered - atStart.answered, failed: failed - atStart.failed };
    const spoolBytes = (await stat(join(dataDir, "trace-spool.jsonl")).catch(() => ({ size: 0 }))).size;
    const recoveredAt = performance.now();
    proxy.restore();
    let drainedMs: number | undefined;
    while (performance.now() - recoveredAt < 600_000) {
      const size = (await stat(join(dataDir, "trace-spool.jsonl")).catch(() => ({ size: 0 }))).size;
      if (size === 0) {
        drainedMs = Math.round(performance.now() - recoveredAt);
        break;
      }
      await delay(100);
    }
    await delay(5000);
    running = false;
    await load;
    await delay(3000);
    const counts = await writerCounts(sidecar.address);
    client.close();
    await sidecar.stop();
    sidecar = undefined;

    const db = postgres(dbUrl.toString(), { max: 1, onnotice: () => {} });
    const found = new Set<string>();
    for (let i = 0; i < handedOut.length; i += 5000) {
      const ids = handedOut.slice(i, i + 5000);
      const rows = await db<{ id: string }[]>`SELECT trace_id::text AS id FROM recall_traces WHERE trace_id::text = ANY(${ids})`;
      for (const r of rows) found.add(r.id);
    }
    await db.end();
    console.log(
      JSON.stringify({
        figure: "postgres blackhole under a steady read load",
        blackholeS: BLACKHOLE_S,
        readsPerS: READS_PER_S,
        readsDuringBlackhole: during,
        failuresByCode: Object.fromEntries(failures),
        spoolBytesAtRecovery: spoolBytes,
        traces: { handedOut: handedOut.length, inPostgres: found.size, lost: handedOut.length - found.size, spooled: counts.spooled ?? 0, replayed: counts.replayed ?? 0 },
        drainAfterRecoveryMs: drainedMs ?? "not drained in 10 min",
      }),
    );
  } finally {
    await sidecar?.stop();
    proxy.close();
    await rm(dataDir, { recursive: true, force: true });
    await admin.unsafe(`DROP DATABASE IF EXISTS ${dbName} WITH (FORCE)`).catch(() => {});
    await admin.end();
  }
}

const round = (n: number) => Math.round(n * 10) / 10;

const only = args.get("only");
if (!only || only === "memory") await requestMemory();
if (!only || only === "shutdown") await shutdownWithOverLimitClient();
if (!only || only === "blackhole") await blackhole();
