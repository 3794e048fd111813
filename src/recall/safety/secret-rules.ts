/**
 * Our own secret rules: the shapes the maintained ruleset (secret-ruleset.ts,
 * secretlint's recommended preset) does not report, or reports only at a
 * provider's exact length or in a file's context. Matched on the raw
 * statement and on its decoded payloads. Each family has fake examples in
 * the labelled corpus (test/fixtures/safety/corpus.json).
 */

export type SecretFamily =
  | "stripe"
  | "aws-key-id"
  | "google-api-key"
  | "provider-key"
  | "vcs-token"
  | "chat-token"
  | "jwt"
  | "private-key"
  | "connection-string"
  | "credential-pair";

export interface SecretRule {
  family: SecretFamily;
  pattern: RegExp;
}

const rule = (family: SecretFamily, pattern: RegExp): SecretRule => ({ family, pattern });

/** The names a credential goes by in a key/value pair. */
const CREDENTIAL_NAME = String.raw`(?:password|passwd|passphrase|pwd|secret|secret[_-]?key|api[_-]?key|apikey|api[_-]?secret|access[_-]?key|access[_-]?token|auth[_-]?token|bearer[_-]?token|refresh[_-]?token|session[_-]?token|client[_-]?secret|private[_-]?key|token|credentials?)`;

/** A credential name may carry a prefix: DB_PASSWORD, stripe-api-key. */
const NAMED = String.raw`(?<![A-Za-z0-9])(?:[A-Za-z0-9]+[_-])*`;

/** Values that stand for a secret rather than being one. */
const NOT_PLACEHOLDER = String.raw`(?![<{$%]|\*{3}|x{4}|\.{3}|(?:redacted|none|null|changeme|placeholder|your[_-]|1password\b|env\b))`;

export const SECRET_RULES: readonly SecretRule[] = [
  // Stripe secret, restricted and webhook keys (publishable pk_ keys are public by design).
  rule("stripe", /\b(?:sk|rk)_(?:live|test)_[A-Za-z0-9]{16,}\b/),
  rule("stripe", /\bwhsec_[A-Za-z0-9]{24,}\b/),
  // AWS access key ids, the documented example included: a memory has no use for one.
  rule("aws-key-id", /\b(?:A3T[A-Z0-9]|AKIA|ASIA|AGPA|AIDA|AROA|AIPA|ANPA|ANVA)[A-Z0-9]{16}\b/),
  rule("google-api-key", /\bAIza[0-9A-Za-z_-]{35}\b/),
  // OpenAI-style keys in every generation's shape (the ruleset knows only the T3BlbkFJ form).
  rule("provider-key", /\bsk-(?:proj-|svcacct-|admin-|live-|test-|ant-)?[A-Za-z0-9_-]{20,}\b/),
  // VCS tokens of any length, also truncated ones (the ruleset wants the exact length).
  rule("vcs-token", /\b(?:gh[pousr]_[A-Za-z0-9]{20,}|github_pat_[A-Za-z0-9_]{20,}|glpat-[A-Za-z0-9_-]{20,})\b/),
  rule("chat-token", /\bxox[abposr]-[A-Za-z0-9-]{10,}\b/),
  rule("jwt", /\beyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}/),
  // The header alone: the ruleset reports a key only with its whole body.
  rule("private-key", /-----BEGIN [A-Z0-9 ]*PRIVATE KEY(?: BLOCK)?-----/),
  // Any scheme with a user and a password: postgres://, redis://, amqp://, https://, …
  rule("connection-string", new RegExp(String.raw`\b[a-z][a-z0-9+.-]*:\/\/[^\s:/@]+:${NOT_PLACEHOLDER}[^\s@/]{3,}@[^\s/]`, "i")),
  // ADO/JDBC-style strings (Server=…;Password=…) are assignments: the credential-pair rules below.
  // password=…, api_key=…: an assignment is code or config, so any value of 4 characters that is not a placeholder.
  rule("credential-pair", new RegExp(String.raw`${NAMED}${CREDENTIAL_NAME}\b["']?\s*=\s*["']?${NOT_PLACEHOLDER}[^\s"',;]{4,}`, "i")),
  // "token": "…", password: …: prose uses colons too, so the value must look like one (a digit or symbol, or 12 characters).
  rule("credential-pair", new RegExp(String.raw`${NAMED}${CREDENTIAL_NAME}\b["']?\s*:\s*["']?${NOT_PLACEHOLDER}(?:(?=[^\s"',;]*[0-9!@#$%^&*_+/-])[^\s"',;]{4,}|[^\s"',;]{12,})`, "i")),
  // "the password is hunter22": a value with a digit or symbol, not "is stored in 1Password".
  rule("credential-pair", /\b(?:password|passwd|passphrase|pwd|api[_-]?key|access[_-]?token|token)\s+is\s+["'`]?(?=\S*[0-9!@#$%^&*])(?!stored\b|kept\b|in\b)\S{6,}/i),
];
