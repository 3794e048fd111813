/**
 * Step 7: the safety pass. Memory is data, never instructions: a statement
 * that tries to instruct the model, forge the block's structure, or carries a
 * credential is withheld per item, its id kept so the user can inspect and
 * correct it. One bad belief never suppresses the rest of the block.
 *
 * Rules (documented in the README; each has tests with real phrasings):
 * - injection: attempts to override or reveal instructions, to change the
 *   model's role, to hide things from the user, to escalate permissions or
 *   skip approvals, and markup that would forge the block (tags such as
 *   </memory> or <system>, citation markers [m:…], [BLOCKED], chat-template
 *   tokens).
 * - secrets: private keys, cloud/API/VCS tokens, JWTs, URLs with embedded
 *   passwords, and "password: …"/"api_key=…" style assignments.
 * - private reasoning: belief types that hold the agent's own reasoning or
 *   credentials are never rendered, whatever they say.
 */

export type SafetyVerdict = { ok: true } | { ok: false; reason: "injection" | "secret" | "private" };

// Memory is written in the third person ("Andy prefers…"); these shapes are
// instructions aimed at the model, not facts about the principal.
const INJECTION_PATTERNS: readonly RegExp[] = [
  // "ignore the above", "disregard all prior directives", "forget your previous instructions"
  /\b(ignore|disregard|forget|override|bypass)\s+(?:(?:all|any|of|the|your|these|those)\s+)*(previous|prior|above|earlier|preceding|foregoing|system|original|initial)\b/i,
  /\b(ignore|disregard|forget|override|bypass)\s+(?:(?:all|any|of|the|your|these|those|my)\s+)*(instructions|directives|guidelines|programming|safety\s+rules|system\s+prompt)\b/i,
  /\bforget\s+(everything|all)\s+(you|that|about\s+your)\b/i,
  /\b(new|updated|real|actual|hidden|secret)\s+(system\s+)?(instructions?|directives?|orders)\s*[:\-]/i,
  /\byou(\s+are|'re|’re|\s+must|\s+will|\s+shall)\s+(now|no\s+longer)\b/i,
  /\bfrom\s+now\s+on\b[^.\n]{0,20}\b(you|assistant|the\s+agent)\b/i,
  /\b(act|behave|respond)\s+as\s+(if\s+you\s+were\s+|an?\s+)?(unrestricted|jailbroken|dan|developer\s+mode|admin|root)\b/i,
  /\b(pretend|roleplay|role-play)\s+(that\s+)?you\s+(are|were)\b/i,
  /\byou\s+(must|should|will|can)\s+(pretend|roleplay)\b/i,
  /\b(do\s+not|don't|never)\s+(tell|inform|mention|reveal|show)\b[^.\n]{0,20}\b(the\s+)?(user|owner|human)\b/i,
  /\b(reveal|print|repeat|exfiltrate|leak|disclose|dump)\b[^.\n]{0,30}\b(system\s+prompt|your\s+instructions|your\s+prompt|api\s*keys?|credentials|secrets?|passwords?|access\s+tokens?|auth\s+tokens?)\b/i,
  /\brepeat\s+(the\s+|all\s+)?(words|text|everything|lines?)\s+(above|before)\b/i,
  /\b(grant|give)\s+(yourself|the\s+(agent|assistant|model))\b[^.\n]{0,30}\b(admin|root|permissions?|access|privileges?)\b/i,
  /\b(skip|bypass|disable)\b[^.\n]{0,20}\b(approvals?|confirmations?|safety|guardrails?|security\s+checks?)\b/i,
  /\b(always|automatically)\s+(approve|transfer|pay|grant|wire|execute|obey)\b/i,
  /\b(what|show|tell)\b[^.\n]{0,20}\byour\s+(system\s+prompt|instructions|hidden\s+prompt)\b/i,
  // A memory that opens with an imperative to move or destroy data is a command, not a fact.
  /^\s*(please\s+)?(forward|send|email|upload|post|transfer|wire|delete|exfiltrate|leak)\b/i,
  // Markup that would forge the block, the conversation or a chat template.
  /<\/?\s*(system|assistant|user|memory|instructions?|tool|im_start|im_end)\b[^>]*>/i,
  /<\|(im_start|im_end|system|endoftext|begin_of_text|start_header_id)\|?>/i,
  /<<\s*\/?\s*SYS\s*>>/i,
  /\[\s*(INST|\/INST|SYSTEM)\s*\]/i,
  /\[m:[0-9a-f]{4,}\]/i,
  /\[BLOCKED\]/i,
  /^\s*(system|assistant)\s*:/i,
];

const SECRET_PATTERNS: readonly RegExp[] = [
  /-----BEGIN [A-Z ]*PRIVATE KEY-----/,
  /\bAKIA[0-9A-Z]{16}\b/,
  /\bgh[pousr]_[A-Za-z0-9]{30,}\b/,
  /\bgithub_pat_[A-Za-z0-9_]{30,}\b/,
  /\bsk-(proj-|live-|test-)?[A-Za-z0-9_-]{20,}\b/,
  /\bxox[abprs]-[A-Za-z0-9-]{10,}\b/,
  /\bAIza[0-9A-Za-z_-]{35}\b/,
  /\beyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}/,
  /\b[a-z][a-z0-9+.-]*:\/\/[^\s:/@]+:[^\s@/]+@/i,
  /\b(password|passwd|passphrase|pwd|secret|api[_-]?key|access[_-]?token|auth[_-]?token|client[_-]?secret)\b\s*[:=]\s*\S{4,}/i,
  // "the password is hunter22": a value with a digit or symbol, not "is stored in 1Password".
  /\b(password|passwd|passphrase|pwd|api[_-]?key|access[_-]?token)\s+is\s+["'`]?(?=\S*[0-9!@#$%^&*])\S{6,}/i,
];

const PRIVATE_TYPES: ReadonlySet<string> = new Set(["private_reasoning", "chain_of_thought", "credential", "secret"]);

export function scanStatement(statement: string, beliefType: string): SafetyVerdict {
  if (PRIVATE_TYPES.has(beliefType)) return { ok: false, reason: "private" };
  if (SECRET_PATTERNS.some((re) => re.test(statement))) return { ok: false, reason: "secret" };
  if (INJECTION_PATTERNS.some((re) => re.test(statement))) return { ok: false, reason: "injection" };
  return { ok: true };
}

/** The placeholder text that replaces a withheld statement in the block. */
export function withheldText(reason: "injection" | "secret" | "private"): string {
  switch (reason) {
    case "injection":
      return "[BLOCKED] withheld: failed injection scan.";
    case "secret":
      return "[BLOCKED] withheld: contains a credential.";
    case "private":
      return "[BLOCKED] withheld: private reasoning.";
  }
}

/**
 * The event log is raw conversation, so the belief scan's injection rules
 * would withhold ordinary history ("from now on you should use tabs" is a
 * user's instruction that really happened). Episodes are scanned for what
 * must never be rendered anywhere: credentials, private reasoning, and markup
 * that would forge the block, a citation or the conversation.
 */
const EPISODE_FORGERY_PATTERNS: readonly RegExp[] = [
  /<\/?\s*(episodes|memory|system|assistant|instructions?|tool|im_start|im_end)\b[^>]*>/i,
  /<\|(im_start|im_end|system|endoftext|begin_of_text|start_header_id)\|?>/i,
  /<<\s*\/?\s*SYS\s*>>/i,
  /\[\s*(INST|\/INST|SYSTEM)\s*\]/i,
  /\[(e|m):[0-9a-f]{4,}\]/i,
  /\[BLOCKED\]/i,
];

const PRIVATE_EPISODE_KINDS: ReadonlySet<string> = new Set(["private_reasoning", "chain_of_thought", "reasoning", "credential", "secret"]);

export function scanEpisode(content: string, kind: string): SafetyVerdict {
  if (PRIVATE_EPISODE_KINDS.has(kind.toLowerCase())) return { ok: false, reason: "private" };
  if (SECRET_PATTERNS.some((re) => re.test(content))) return { ok: false, reason: "secret" };
  if (EPISODE_FORGERY_PATTERNS.some((re) => re.test(content))) return { ok: false, reason: "injection" };
  return { ok: true };
}
