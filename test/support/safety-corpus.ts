import { readFileSync } from "node:fs";

/**
 * The labelled corpus of the safety scan (test/fixtures/safety/corpus.json),
 * expanded: every attack seed also in generated variants (split by
 * zero-width characters, written with look-alike letters from other scripts,
 * encoded as base64 and as hex), every secret template filled with fake
 * credentials generated here in the provider's format (seeded, so the same
 * every run; nothing real is committed), and every benign statement also in
 * the variants a harmless writer could produce (look-alike letters,
 * zero-width characters, base64).
 */

export type Label = "benign" | "injection" | "secret";
export type Variant = "plain" | "zero-width" | "homoglyph" | "base64" | "hex";

export interface CorpusCase {
  label: Label;
  /** The attack or secret family, or "benign". */
  family: string;
  variant: Variant;
  text: string;
}

interface CorpusFile {
  attacks: Record<string, string[]>;
  secrets: Record<string, string[]>;
  benign: string[];
}

const FILE = new URL("../fixtures/safety/corpus.json", import.meta.url);

export function loadCorpus(): CorpusCase[] {
  const file = JSON.parse(readFileSync(FILE, "utf8")) as CorpusFile;
  const fake = fakeCredentials(0x5eed);
  const cases: CorpusCase[] = [];
  for (const [family, seeds] of Object.entries(file.attacks)) {
    for (const seed of seeds) for (const [variant, text] of variants(seed)) cases.push({ label: "injection", family, variant, text });
  }
  for (const [family, templates] of Object.entries(file.secrets)) {
    for (const template of templates) {
      const text = template.replace(/\{fake:([a-z0-9-]+)\}/g, (_, kind: string) => fake(kind));
      cases.push({ label: "secret", family, variant: "plain", text });
      cases.push({ label: "secret", family, variant: "zero-width", text: zeroWidth(text) });
    }
  }
  for (const text of file.benign) for (const [variant, v] of variants(text)) cases.push({ label: "benign", family: "benign", variant, text: v });
  return cases;
}

function variants(text: string): [Variant, string][] {
  return [
    ["plain", text],
    ["zero-width", zeroWidth(text)],
    ["homoglyph", homoglyphs(text)],
    ["base64", `Andy saved this note: ${Buffer.from(text, "utf8").toString("base64")}`],
    ["hex", `Reference ${Buffer.from(text, "utf8").toString("hex")}`],
  ];
}

const ZERO_WIDTH = ["\u200b", "\u200c", "\u2060", "\u00ad", "\ufeff"];

/** An invisible character after every second letter of each word. */
function zeroWidth(text: string): string {
  let i = 0;
  return text.replace(/[A-Za-z]{2}(?=[A-Za-z])/g, (pair) => pair + ZERO_WIDTH[i++ % ZERO_WIDTH.length]);
}

/** Latin letters replaced by their look-alikes from Cyrillic and Greek. */
const LOOK_ALIKES: Record<string, string> = {
  a: "\u0430", c: "\u0441", e: "\u0435", i: "\u0456", o: "\u03bf", p: "\u0440", s: "\u0455", x: "\u0445", y: "\u0443",
  A: "\u0410", B: "\u0392", C: "\u0421", E: "\u0415", H: "\u041d", I: "\u0406", K: "\u039a", M: "\u041c", O: "\u041e",
  P: "\u0420", S: "\u0405", T: "\u0422", X: "\u03a7", Y: "\u03a5",
};

function homoglyphs(text: string): string {
  return text.replace(/[A-Za-z]/g, (c) => LOOK_ALIKES[c] ?? c);
}

/** A seeded generator of fake credentials in each provider's documented shape. */
function fakeCredentials(seed: number): (kind: string) => string {
  let state = seed >>> 0;
  const next = () => {
    // mulberry32
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  const from = (alphabet: string, n: number) => Array.from({ length: n }, () => alphabet[Math.floor(next() * alphabet.length)]).join("");
  const LOWER = "abcdefghijklmnopqrstuvwxyz";
  const UPPER = LOWER.toUpperCase();
  const DIGITS = "0123456789";
  const ALNUM = LOWER + UPPER + DIGITS;
  const B64 = ALNUM + "+/";
  const URLSAFE = ALNUM + "-_";
  const HEX = "0123456789abcdef";
  const pem = (kind: string, magic: string) => {
    const body = magic + from(B64, 320);
    const lines = body.match(/.{1,64}/g)!.join("\n");
    return `-----BEGIN ${kind}PRIVATE KEY-----\n${lines}\n-----END ${kind}PRIVATE KEY-----`;
  };
  const b64url = (s: string) => Buffer.from(s, "utf8").toString("base64url");
  const kinds: Record<string, () => string> = {
    "stripe-live": () => `sk_live_${from(ALNUM, 24)}`,
    "stripe-test": () => `sk_test_${from(ALNUM, 24)}`,
    "stripe-restricted": () => `rk_live_${from(ALNUM, 24)}`,
    "stripe-webhook": () => `whsec_${from(ALNUM, 32)}`,
    "aws-key-id": () => `AKIA${from(UPPER + "234567", 16)}`,
    "aws-secret": () => from(B64, 40),
    "github-classic": () => `ghp_${from(ALNUM, 36)}`,
    "github-fine-grained": () => `github_pat_${from(ALNUM, 22)}_${from(ALNUM, 59)}`,
    "github-oauth": () => `gho_${from(ALNUM, 36)}`,
    "gitlab-pat": () => `glpat-${from(URLSAFE, 20)}`,
    "slack-bot": () => `xoxb-${from(DIGITS, 12)}-${from(DIGITS, 13)}-${from(ALNUM, 24)}`,
    "slack-webhook": () => `https://hooks.slack.com/services/T${from(UPPER + DIGITS, 8)}/B${from(UPPER + DIGITS, 8)}/${from(ALNUM, 24)}`,
    "pem-rsa": () => pem("RSA ", "MII"),
    "pem-openssh": () => pem("OPENSSH ", "b3BlbnNzaC1rZXktdjE"),
    "google-api": () => `AIza${from(URLSAFE, 35)}`,
    "openai-legacy": () => `sk-${from(ALNUM, 48)}`,
    "openai-project": () => `sk-proj-${from(URLSAFE, 58)}T3BlbkFJ${from(URLSAFE, 58)}`,
    anthropic: () => `sk-ant-api03-${from(URLSAFE, 93)}AA`,
    jwt: () => `${b64url('{"alg":"HS256","typ":"JWT"}')}.${b64url(`{"sub":"${from(DIGITS, 10)}","name":"Andy"}`)}.${from(URLSAFE, 43)}`,
    npm: () => `npm_${from(ALNUM, 36)}`,
    sendgrid: () => `SG.${from(ALNUM, 22)}.${from(ALNUM, 43)}`,
    shopify: () => `shpat_${from(HEX, 32)}`,
    huggingface: () => `hf_${from(LOWER + UPPER, 34)}`,
    password: () => `${from(UPPER, 2)}${from(LOWER, 5)}${from(DIGITS, 3)}${from("!*-_", 1)}${from(ALNUM, 3)}`,
    hex32: () => from(HEX, 32),
  };
  return (kind) => {
    const make = kinds[kind];
    if (!make) throw new Error(`no fake credential kind ${kind}`);
    return make();
  };
}
