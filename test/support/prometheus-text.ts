/**
 * A strict reader of the Prometheus text exposition format (0.0.4), enough
 * to check what /metrics serves: every sample line must parse, and every
 * sample must belong to a metric with HELP and TYPE.
 */

export interface Sample {
  name: string;
  labels: Record<string, string>;
  value: number;
}

export interface Scrape {
  samples: Sample[];
  types: Map<string, string>;
  /** The value of the one sample with this name and (at least) these labels; throws when there is none or several. */
  value(name: string, labels?: Record<string, string>): number;
  has(name: string): boolean;
}

// Values as Go's ParseFloat reads them (Prometheus does): NaN and Inf in any case (prom-client writes "Nan").
const SAMPLE = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})? (-?[0-9.eE+-]+|[Nn][Aa][Nn]|[+-]?[Ii]nf)(?: -?\d+)?$/;
const LABEL = /([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"(?:,|$)/y;
const SUFFIXES = ["_bucket", "_count", "_sum", "_total", "_created"];

export function parsePrometheusText(text: string): Scrape {
  const samples: Sample[] = [];
  const types = new Map<string, string>();
  const helps = new Set<string>();
  for (const line of text.split("\n")) {
    if (line === "") continue;
    const meta = line.match(/^# (HELP|TYPE) ([a-zA-Z_:][a-zA-Z0-9_:]*) (.*)$/);
    if (meta) {
      if (meta[1] === "TYPE") types.set(meta[2]!, meta[3]!);
      else helps.add(meta[2]!);
      continue;
    }
    if (line.startsWith("#")) continue;
    const m = line.match(SAMPLE);
    if (!m) throw new Error(`not a sample line: ${line}`);
    const labels: Record<string, string> = {};
    if (m[2]) {
      LABEL.lastIndex = 0;
      while (LABEL.lastIndex < m[2].length) {
        const l = LABEL.exec(m[2]);
        if (!l) throw new Error(`bad labels in: ${line}`);
        labels[l[1]!] = l[2]!.replace(/\\(.)/g, (_, c: string) => (c === "n" ? "\n" : c));
      }
    }
    samples.push({ name: m[1]!, labels, value: Number(m[3]!.replace(/^([+-]?)inf$/i, "$1Infinity").replace(/^nan$/i, "NaN")) });
  }
  for (const s of samples) {
    const family = [s.name, ...SUFFIXES.filter((x) => s.name.endsWith(x)).map((x) => s.name.slice(0, -x.length))].find((n) => types.has(n));
    if (family === undefined || !helps.has(family)) throw new Error(`sample ${s.name} has no HELP and TYPE`);
  }
  const matching = (name: string, labels: Record<string, string>) =>
    samples.filter((s) => s.name === name && Object.entries(labels).every(([k, v]) => s.labels[k] === v));
  return {
    samples,
    types,
    has: (name) => samples.some((s) => s.name === name),
    value(name, labels = {}) {
      const found = matching(name, labels);
      if (found.length !== 1) throw new Error(`${found.length} samples of ${name}${JSON.stringify(labels)}`);
      return found[0]!.value;
    },
  };
}
