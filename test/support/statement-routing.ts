import { loadModule, parseSync } from "libpg-query";
import { isFleetScan } from "../../src/store/fleet-scan.js";
import type { SqlClient } from "../../src/store/sql-client.js";

/**
 * Would Citus route this statement to one shard group? The tables holding a
 * tenant's rows are to be distributed by tenant_id and co-located
 * (docs/scale-out.md), so a statement is routable when every reference to
 * such a table is pinned to one tenant: `tenant_id = $n` (or a constant) in
 * its WHERE or JOIN ... ON conjuncts, or `x.tenant_id = y.tenant_id` with a
 * table that is, in the same or an enclosing query. All pins of a statement
 * must name the same tenant (checked on the parameter values as they ran).
 * An INSERT must set tenant_id from a parameter, a constant or a pinned row.
 *
 * Statements declared fleet scans (src/store/fleet-scan.ts) may read across
 * tenants instead, but only as plain reads (no write, no row lock) whose
 * tenant tables are all joined on tenant_id.
 *
 * Parsed by the PostgreSQL parser itself (libpg-query), never matched as text.
 */

/** Tables with a tenant_id column: distributed by it. The test checks this list against the migrated schema. */
export const TENANT_TABLES: ReadonlySet<string> = new Set([
  "principal_heads",
  "beliefs",
  "episodes",
  "persona_entries",
  "subject_aliases",
  "recall_traces",
  "citations",
  "rejections",
  "recalled_events",
  "rederivation_hints",
  "principal_lexicon",
  "belief_embeddings",
]);

type Node = Record<string, unknown>;

interface Ref {
  id: number;
  relname: string;
  alias: string;
}

interface Scope {
  refs: Map<string, Ref>;
  /** Every range item's name (tables, subqueries, functions): decides what an unqualified column means. */
  items: number;
  parent: Scope | undefined;
}

const STATEMENTS = ["SelectStmt", "InsertStmt", "UpdateStmt", "DeleteStmt"] as const;
const WRITES = new Set(["InsertStmt", "UpdateStmt", "DeleteStmt"]);

let loaded: Promise<void> | undefined;
/** Loads the parser (WebAssembly); call once before `routingProblems`. */
export function loadParser(): Promise<void> {
  loaded ??= loadModule();
  return loaded;
}

const parsed = new Map<string, Node>();

/** What keeps `text` (run with `params`) from being routed to one tenant's shard group; empty when nothing does. */
export function routingProblems(text: string, params: readonly unknown[] = []): string[] {
  let tree = parsed.get(text);
  if (!tree) {
    tree = parseSync(text) as unknown as Node;
    parsed.set(text, tree);
  }
  return new Analysis(params, isFleetScan(text)).run(tree);
}

class Analysis {
  private readonly refs: Ref[] = [];
  private readonly parent: number[] = [];
  private readonly pins = new Map<number, unknown[]>();
  private readonly ctes = new Set<string>();
  private readonly handled = new WeakSet<object>();
  private readonly problems: string[] = [];
  private writes = false;
  private locks = false;

  constructor(
    private readonly params: readonly unknown[],
    private readonly fleet: boolean,
  ) {}

  run(tree: Node): string[] {
    collectCtes(tree, this.ctes);
    this.walk(tree, undefined);
    this.verdict();
    return this.problems;
  }

  private walk(node: unknown, scope: Scope | undefined): void {
    if (Array.isArray(node)) {
      for (const n of node) this.walk(n, scope);
      return;
    }
    if (node === null || typeof node !== "object") return;
    for (const [key, value] of Object.entries(node as Node)) {
      if ((STATEMENTS as readonly string[]).includes(key)) this.statement(key, value as Node, scope);
      else if (key === "RangeVar" && !this.handled.has(value as object) && TENANT_TABLES.has(relnameOf(value as Node))) {
        this.problems.push(`${relnameOf(value as Node)}: used outside a SELECT, INSERT, UPDATE or DELETE this check understands`);
      } else this.walk(value, scope);
    }
  }

  private statement(kind: string, stmt: Node, outer: Scope | undefined): void {
    if (WRITES.has(kind)) this.writes = true;
    if (stmt.lockingClause) this.locks = true;
    if (kind === "InsertStmt") return this.insert(stmt, outer);
    const scope: Scope = { refs: new Map(), items: 0, parent: outer };
    const quals: unknown[] = [stmt.whereClause];
    // A set operation's arms are SELECTs of their own (unwrapped in the tree), side by side.
    const { larg, rarg } = stmt as { larg?: Node; rarg?: Node };
    if (larg) this.statement("SelectStmt", larg, outer);
    if (rarg) this.statement("SelectStmt", rarg, outer);
    if (kind === "UpdateStmt" || kind === "DeleteStmt") this.range({ RangeVar: stmt.relation }, scope, quals);
    for (const item of (stmt.fromClause ?? stmt.usingClause ?? []) as unknown[]) this.range(item, scope, quals);
    for (const q of quals) for (const c of conjuncts(q)) this.conjunct(c, scope);
    // Everything else (CTEs, subqueries in FROM or in expressions, set operations) is visited with this scope outside it.
    const { relation: _relation, larg: _larg, rarg: _rarg, ...rest } = stmt;
    this.walk(rest, scope);
  }

  /** INSERT: tenant_id must come from a parameter, a constant or a pinned row of the SELECT. */
  private insert(stmt: Node, outer: Scope | undefined): void {
    const relation = stmt.relation as Node;
    this.handled.add(relation);
    const relname = String(relation.relname);
    const select = (stmt.selectStmt as Node | undefined)?.SelectStmt as Node | undefined;
    const { relation: _relation, selectStmt: _select, ...rest } = stmt;
    this.walk(rest, outer);
    if (!TENANT_TABLES.has(relname)) {
      if (select) this.statement("SelectStmt", select, outer);
      return;
    }
    const target = this.addRef(relname, relname);
    const cols = ((stmt.cols ?? []) as Node[]).map((c) => String((c.ResTarget as Node).name));
    const index = cols.indexOf("tenant_id");
    if (index < 0 || !select) {
      this.problems.push(`INSERT INTO ${relname}: does not set tenant_id`);
      return;
    }
    if (select.valuesLists) {
      for (const row of select.valuesLists as Node[]) this.pinTo(target, ((row.List as Node).items as unknown[])[index]);
      this.walk(select.valuesLists, outer);
      return;
    }
    const value = (((select.targetList ?? []) as Node[])[index]?.ResTarget as Node | undefined)?.val;
    this.statement("SelectStmt", select, outer);
    // The SELECT's own scope is gone by now; resolve its column against its range by alias.
    const column = this.columnRefAlias(value);
    if (column !== undefined) {
      const source = this.refs.find((r) => r.alias === column && TENANT_TABLES.has(r.relname));
      if (source) this.union(target.id, source.id);
      else this.problems.push(`INSERT INTO ${relname}: tenant_id from ${column}, not a tenant table`);
    } else this.pinTo(target, value);
  }

  private range(item: unknown, scope: Scope, quals: unknown[]): void {
    const node = item as Node;
    if (node.RangeVar) {
      const rv = node.RangeVar as Node;
      this.handled.add(rv);
      scope.items += 1;
      const relname = relnameOf(rv);
      if (this.ctes.has(relname) || !TENANT_TABLES.has(relname)) {
        scope.refs.set(aliasOf(rv), { id: -1, relname, alias: aliasOf(rv) });
        return;
      }
      const ref = this.addRef(relname, aliasOf(rv));
      scope.refs.set(ref.alias, ref);
    } else if (node.JoinExpr) {
      const join = node.JoinExpr as Node;
      this.range(join.larg, scope, quals);
      this.range(join.rarg, scope, quals);
      quals.push(join.quals);
    } else {
      // A subquery or a function in FROM: a name of its own, visited by the walk.
      scope.items += 1;
    }
  }

  private conjunct(c: Node, scope: Scope): void {
    const expr = c.A_Expr as Node | undefined;
    if (!expr || expr.kind !== "AEXPR_OP" || opName(expr) !== "=") return;
    const left = this.tenantColumn(expr.lexpr, scope);
    const right = this.tenantColumn(expr.rexpr, scope);
    if (left && right) this.union(left.id, right.id);
    else if (left) this.pinTo(left, expr.rexpr);
    else if (right) this.pinTo(right, expr.lexpr);
  }

  /** `x.tenant_id` (or a lone `tenant_id` in a one-table scope) of a tenant table in scope. */
  private tenantColumn(expr: unknown, scope: Scope): Ref | undefined {
    const fields = columnFields(expr);
    if (!fields || fields[fields.length - 1] !== "tenant_id") return undefined;
    for (let s: Scope | undefined = scope; s; s = s.parent) {
      if (fields.length === 2) {
        const ref = s.refs.get(fields[0]!);
        if (ref) return ref.id >= 0 ? ref : undefined;
      } else if (s.items > 0) {
        const only = s.items === 1 ? [...s.refs.values()][0] : undefined;
        return only && only.id >= 0 ? only : undefined;
      }
    }
    return undefined;
  }

  private columnRefAlias(expr: unknown): string | undefined {
    const fields = columnFields(expr);
    return fields && fields.length === 2 && fields[1] === "tenant_id" ? fields[0] : undefined;
  }

  /** Pins `ref` to the value of `expr` when it is a parameter or a constant. */
  private pinTo(ref: Ref, expr: unknown): void {
    const value = constantValue(expr, this.params);
    if (value === undefined) return;
    this.pins.set(ref.id, [...(this.pins.get(ref.id) ?? []), value]);
  }

  private addRef(relname: string, alias: string): Ref {
    const ref = { id: this.refs.length, relname, alias };
    this.refs.push(ref);
    this.parent.push(ref.id);
    return ref;
  }

  private find(id: number): number {
    while (this.parent[id] !== id) id = this.parent[id] = this.parent[this.parent[id]!]!;
    return id;
  }

  private union(a: number, b: number): void {
    this.parent[this.find(a)] = this.find(b);
  }

  private verdict(): void {
    const pinned = new Map<number, unknown[]>();
    for (const [id, values] of this.pins) pinned.set(this.find(id), [...(pinned.get(this.find(id)) ?? []), ...values]);
    if (this.fleet) {
      if (this.writes || this.locks) this.problems.push("a fleet scan must be a plain read: no write, no row lock");
      const groups = new Set(this.refs.map((r) => this.find(r.id)));
      if (groups.size > 1) this.problems.push("a fleet scan joins tenant tables on something other than tenant_id");
      return;
    }
    for (const ref of this.refs) {
      if (!pinned.has(this.find(ref.id))) this.problems.push(`${ref.relname} ${ref.alias}: no tenant_id = $n reaches it`);
    }
    const tenants = new Set([...pinned.values()].flat().map((v) => JSON.stringify(v)));
    if (tenants.size > 1) this.problems.push(`spans tenants ${[...tenants].join(", ")}`);
  }
}

function collectCtes(node: unknown, into: Set<string>): void {
  if (Array.isArray(node)) return node.forEach((n) => collectCtes(n, into));
  if (node === null || typeof node !== "object") return;
  for (const [key, value] of Object.entries(node as Node)) {
    if (key === "CommonTableExpr") into.add(String((value as Node).ctename));
    collectCtes(value, into);
  }
}

function conjuncts(expr: unknown): Node[] {
  if (!expr) return [];
  const bool = (expr as Node).BoolExpr as Node | undefined;
  if (bool?.boolop === "AND_EXPR") return (bool.args as unknown[]).flatMap(conjuncts);
  return [expr as Node];
}

function opName(expr: Node): string {
  const names = expr.name as Node[];
  return String((names[names.length - 1]!.String as Node).sval);
}

function columnFields(expr: unknown): string[] | undefined {
  const ref = (expr as Node | undefined)?.ColumnRef as Node | undefined;
  if (!ref) return undefined;
  const fields = (ref.fields as Node[]).map((f) => (f.String ? String((f.String as Node).sval) : "*"));
  return fields;
}

/** A parameter's value or a constant's, through casts; undefined for anything else. */
function constantValue(expr: unknown, params: readonly unknown[]): unknown {
  const node = expr as Node | undefined;
  if (!node) return undefined;
  if (node.TypeCast) return constantValue((node.TypeCast as Node).arg, params);
  if (node.ParamRef) return params[Number((node.ParamRef as Node).number) - 1] ?? null;
  if (node.A_Const) {
    const c = node.A_Const as Node;
    return c.sval ? (c.sval as Node).sval : undefined;
  }
  return undefined;
}

function relnameOf(rv: Node): string {
  return String(rv.relname);
}

function aliasOf(rv: Node): string {
  return String((rv.alias as Node | undefined)?.aliasname ?? rv.relname);
}

/** Statements the store issued (its own code, not a test's), each with what keeps it from routing. */
export interface RoutingLog {
  statements: number;
  problems: { text: string; problems: string[] }[];
}

/**
 * Wraps a store's client: every statement issued from src/ (not a test's own
 * setup or assertions) is checked as it runs.
 */
export function routingChecked(inner: SqlClient, log: RoutingLog): SqlClient {
  const check = (text: string, params: readonly unknown[]) => {
    if (!issuedBySource(new Error().stack ?? "")) return;
    log.statements += 1;
    const problems = routingProblems(text, params);
    if (problems.length > 0 && !log.problems.some((p) => p.text === text)) log.problems.push({ text, problems });
  };
  const wrap = (db: SqlClient): SqlClient => ({
    kind: db.kind,
    query: (text, params, options) => {
      check(text, params ?? []);
      return db.query(text, params, options);
    },
    exec: (script) => db.exec(script),
    transaction: (work, options) => db.transaction((tx) => work(wrap(tx)), options),
    listen: (channel, onNotify, onConnect) => db.listen(channel, onNotify, onConnect),
    close: () => db.close(),
  });
  return wrap(inner);
}

/** The frame that called query(): the third line of the stack ("Error", the wrapper, its caller). */
function issuedBySource(stack: string): boolean {
  const caller = stack.split("\n")[3] ?? "";
  return /[/\\]src[/\\]/.test(caller) && !/[/\\]test[/\\]/.test(caller);
}
