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

const INJECTION_PATTERNS: readonly RegExp[] = [
  /\b(ignore|disregard|forget|override|bypass)\b[^.\n]{0,40}\b(previous|prior|above|earlier|preceding|all|any|your|the|system)\b[^.\n]{0,30}\b(instructions?|prompts?|rules|directions|guidelines|messages?|context|polic(y|ies))\b/i,
  /\b(new|updated|real|actual|hidden|secret)\s+(system\s+)?(instructions?|directives?|orders)\s*[:\-]/i,
  /\b(system|developer)\s+prompt\b/i,
  /\byou\s+(are\s+now|must\s+now|will\s+now|shall\s+now)\b/i,
  /\bfrom\s+now\s+on\b[^.\n]{0,20}\b(you|assistant|the\s+agent)\b/i,
  /\b(act|behave|respond)\s+as\s+(if\s+you\s+were\s+|an?\s+)?(unrestricted|jailbroken|dan|developer\s+mode|admin|root)\b/i,
  /\b(pretend|roleplay)\s+(to\s+be|you\s+are|that\s+you)\b/i,
  /\b(do\s+not|don't|never)\s+(tell|inform|mention|reveal|show)\b[^.\n]{0,20}\b(the\s+)?(user|owner|human)\b/i,
  /\b(reveal|print|output|repeat|exfiltrate|leak|send|email|post)\b[^.\n]{0,30}\b(system\s+prompt|instructions|api\s*keys?|credentials|secrets?|passwords?|tokens?)\b/i,
  /\b(grant|give)\s+(yourself|the\s+(agent|assistant|model))\b[^.\n]{0,30}\b(admin|root|permissions?|access|privileges?)\b/i,
  /\b(skip|bypass|disable|ignore)\b[^.\n]{0,20}\b(approvals?|confirmations?|safety|guardrails?|security\s+checks?)\b/i,
  /\b(always|automatically)\s+(approve|execute|run|transfer|pay)\b/i,
  /<\/?\s*(system|assistant|user|memory|instructions?|tool|im_start|im_end)\b[^>]*>/i,
  /<\|(im_start|im_end|system|endoftext|begin_of_text|start_header_id)\|?>/i,
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
  /\b(password|passwd|passphrase|pwd|secret|api[_-]?key|access[_-]?token|auth[_-]?token|client[_-]?secret)\b\s*(is|[:=])\s*\S{4,}/i,
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
