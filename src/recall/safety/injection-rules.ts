/**
 * The injection rules, by family. Memory is written as facts about the
 * principal ("Andy prefers…", "The user asked to always use metric units");
 * these shapes are instructions aimed at the model reading the block. Every
 * rule reads folded text (text-fold.ts: lower case, Latin skeleton, no
 * invisible characters, single spaces), so it is written in lower-case ASCII.
 * The labelled corpus (test/fixtures/safety/corpus.json) holds attacks of
 * every family and benign statements that look like them.
 */

export type InjectionFamily =
  | "override"
  | "role"
  | "turn"
  | "leak"
  | "conceal"
  | "escalate"
  | "exfiltrate"
  | "forgery"
  | "decode";

export interface InjectionRule {
  family: InjectionFamily;
  pattern: RegExp;
}

/** The start of a clause: where an imperative aimed at the model begins. */
const CLAUSE = String.raw`(?:^|[.!?;:,"'(\[\n-]\s*|\b(?:and|then|now|so|also|please|pls)\s+)`;
/** Who an instruction addresses when it names them. */
const MODEL = String.raw`(?:you|the (?:assistant|ai|bot|llm)|assistant|chatgpt|claude)`;

const rule = (family: InjectionFamily, pattern: RegExp): InjectionRule => ({ family, pattern });

export const INJECTION_RULES: readonly InjectionRule[] = [
  // -- override: set aside the instructions the model was given.
  rule("override", /\b(?:ignore|disregard|forget|override|bypass)\s+(?:(?:all|any|every|of|the|your|these|those)\s+)*(?:above|foregoing|preceding)\b/),
  rule("override", /\b(?:ignore|disregard|forget|override|bypass|discard|abandon)\s+(?:(?:all|any|every|of|the|your|these|those|my|our)\s+)*(?:(?:previous|prior|earlier|system|original|initial|developer|safety|existing|old)\s+)*(?:instructions?|directives?|rules|prompts?|guidance|guidelines|orders|commands|programming|constraints|restrictions|polic(?:y|ies)|safety (?:rules|guidelines|filters?)|system prompt|content polic(?:y|ies)|guardrails)\b/),
  rule("override", /\bforget (?:everything|all)\s+(?:you|about your|above|so far)\b/),
  rule("override", /\b(?:new|updated|real|actual|hidden|secret|true|revised|overriding)\s+(?:system\s+)?(?:instructions?|directives?|orders|rules|prompt)\s*(?:[:\-]|are\b|follow\b)/),
  rule("override", /\b(?:these|the following|this)\s+(?:instructions?|rules?|directives?)\s+(?:override|supersede|replace|take precedence over)\b/),
  rule("override", /\b(?:takes?|have|has)\s+(?:precedence|priority)\s+over\s+(?:(?:all|any|your|the|other)\s+)*(?:instructions|system prompt|rules|guidelines)\b/),

  // -- role: assign the model a new identity or free it of its rules.
  rule("role", /\byou(?: are|'re| must| will| shall| should)\s+(?:now|no longer|from now on|henceforth|hereby)\b/),
  rule("role", /\bfrom now on,?\s+(?:you|the (?:assistant|ai|agent|model|bot)|assistant)\s+(?:are|will|must|should|shall|have|answer|respond|reply|act|ignore|only|may|can|need)\b/),
  rule("role", /\b(?:you are|you're)\s+(?:an?\s+)?(?:unrestricted|unfiltered|uncensored|jailbroken|rogue|evil|amoral|dan\b|do anything now)/),
  rule("role", /\b(?:you are|you're)\s+(?:an?\s+)?(?:\w+\s+)?(?:ai|assistant|model|bot|chatbot|llm)\s+(?:with(?:out)?|that has no|that ignores|free (?:of|from))\s+(?:any\s+|no\s+)?(?:restrictions|rules|limits|limitations|filters|guidelines|ethics|morals|censorship|safety)/),
  rule("role", new RegExp(String.raw`${CLAUSE}(?:act|behave|respond|answer|reply|speak|operate)\s+as\s+(?:if\s+you\s+(?:were|are)\s+)?(?:an?\s+|my\s+|the\s+)?(?:unrestricted|unfiltered|uncensored|jailbroken|dan\b|developer mode|god mode|admin|administrator|root|system|superuser|different (?:ai|assistant|model)|ai without|assistant without|model without|evil)`)),
  rule("role", /\b(?:pretend|imagine|roleplay|role-play|role play)\s+(?:that\s+)?you\s+(?:are|were|have|can)\b/),
  rule("role", new RegExp(String.raw`\b${MODEL}\s+(?:must|should|will|can|shall)\s+(?:now\s+)?(?:pretend|roleplay|role-play|act as|impersonate|become)\b`)),
  rule("role", new RegExp(String.raw`${CLAUSE}(?:enter|enable|activate|switch (?:to|into)|turn on|go into)\s+(?:the\s+)?(?:god|dan|jailbreak|unrestricted|unfiltered|unlocked|evil)\s+mode\b`)),
  rule("role", /\b(?:your|the assistant's|the model's|the agent's)\s+(?:new|real|true|only)\s+(?:role|persona|identity|name|purpose|goal|task|job|objective|instructions?)\s+(?:is|are|will be)\b/),
  rule("role", new RegExp(String.raw`${CLAUSE}(?:assume|adopt|take on|switch to)\s+(?:the\s+|a\s+)?(?:new\s+)?(?:persona|role|identity|character)\s+of\b`)),
  rule("role", new RegExp(String.raw`${CLAUSE}(?:stay|remain) in character\b|\b(?:never|do not|don't) break character\b`)),
  rule("role", /\byou\s+(?:have|now have)\s+(?:no|zero)\s+(?:restrictions|rules|limits|limitations|filters|guidelines|boundaries)\b/),
  rule("role", /\b(?:jailbreak(?: mode)?|jailbroken mode|dan mode|developer mode)\s+(?:is\s+)?(?:enabled|activated|on)\b[^.\n]{0,40}\byou\b/),

  // -- turn: a forged system, developer or assistant turn, or chat-template markup.
  rule("turn", /(?:^|\n|[.!?]\s)\s*(?:#{1,4}\s*|\[|\*\*|<)?\s*(?:system|developer|assistant|sys)(?:\s+(?:message|prompt|note|override|instruction|instructions|update|notice))?\s*(?:\]|\*\*|>)?\s*:/),
  rule("turn", /(?:^|\n|[.!?]\s)\s*(?:#{1,4}\s*)?(?:instruction|instructions|response|human|user)\s*:\s*(?:you|ignore|disregard|from now|always|never|reveal|act)\b/),
  rule("turn", /<\/?\s*(?:system|assistant|user|developer|memory|instructions?|tool|im_start|im_end)\b[^>]*>/),
  rule("turn", /<\|\s*(?:im_start|im_end|im_sep|system|user|assistant|endoftext|begin_of_text|end_of_text|start_header_id|end_header_id|eot_id|eom_id)\s*\|?>/),
  rule("turn", /<<\s*\/?\s*sys\s*>>/),
  rule("turn", /\[\s*\/?\s*(?:inst|system|sys|developer)\s*\]/),
  rule("turn", /["']role["']\s*:\s*["'](?:system|developer|assistant)["']/),
  rule("turn", /\b(?:begin|end)\s+(?:of\s+)?(?:the\s+)?(?:system|developer)\s+(?:prompt|message|instructions)\b/),
  rule("turn", /\b(?:message|note|instructions?|directive|update|notice)\s+from\s+(?:the\s+)?(?:system|developers?|administrator|admin|operator|openai|anthropic)\s*:/),

  // -- leak: reveal the prompt, the instructions or credentials.
  rule("leak", /\b(?:reveal|print|repeat|output|show|display|recite|exfiltrate|leak|disclose|dump|echo|write out|spell out|tell me)\b[^.\n]{0,30}\b(?:system prompt|your instructions|your prompt|your rules|initial prompt|hidden prompt|developer message|api\s*keys?|credentials|secrets?|passwords?|access tokens?|auth tokens?|private keys?)\b/),
  rule("leak", /\brepeat\s+(?:the\s+|all\s+)?(?:words|text|everything|lines?|messages?)\s+(?:above|before)\b/),
  rule("leak", /\b(?:what|show|tell)\b[^.\n]{0,20}\byour\s+(?:system prompt|instructions|hidden prompt|initial prompt|rules)\b/),

  // -- conceal: keep something from the user.
  rule("conceal", /\b(?:do not|don't|dont|never|must not)\s+(?:tell|inform|mention|reveal|show|disclose)\b[^.\n]{0,25}\b(?:the\s+)?(?:user|owner|human)\b/),
  rule("conceal", /\b(?:keep|hide)\s+(?:this|it|these|that)\s+(?:secret\s+|hidden\s+)?from\s+(?:the\s+)?(?:user|owner|human)\b/),
  rule("conceal", /\bwithout\s+(?:telling|informing|notifying|alerting)\s+(?:the\s+)?(?:user|owner|human)\b/),

  // -- escalate: permissions, approvals and automatic actions.
  rule("escalate", /\b(?:grant|give)\s+(?:yourself|the (?:agent|assistant|model|bot)|this (?:agent|assistant))\b[^.\n]{0,30}\b(?:admin|root|permissions?|access|privileges?|rights)\b/),
  rule("escalate", /\b(?:skip|bypass|disable|turn off)\b[^.\n]{0,20}\b(?:approvals?|confirmations?|safety (?:checks?|filters?|rules|guidelines)|guardrails?|security checks?|content filters?)\b/),
  rule("escalate", /\b(?:always|automatically)\s+(?:approve|transfer|pay|grant|wire|execute|obey)\b/),
  rule("escalate", /\b(?:execute|run)\s+(?:any|every|all)\s+(?:shell\s+)?(?:commands?|code|scripts?)\b[^.\n]{0,30}\b(?:without|no)\b/),

  // -- exfiltrate: a memory that opens with an imperative to move or destroy data is a command.
  rule("exfiltrate", /^\s*(?:please\s+)?(?:forward|send|email|upload|post|transfer|wire|delete|exfiltrate|leak)\b/),

  // -- forgery: markup that would forge the block itself.
  rule("forgery", /\[m:[0-9a-f]{4,}\]/),
  rule("forgery", /\[blocked\]/),

  // -- decode: an instruction to decode a payload and act on what it says.
  rule("decode", /\b(?:decode|decrypt|deobfuscate|unscramble|base64-decode|translate)\b[^.\n]{0,60}\b(?:follow|obey|execute|run|carry out|act on|comply with|do)\s+(?:it|them|that|this|the (?:result|output|decoded \w+|instructions?|text|message|payload|command)|what it says|whatever it says|its instructions)\b/),
  rule("decode", /\b(?:follow|obey|execute|run|carry out|act on)\b[^.\n]{0,30}\b(?:the\s+)?(?:base64|base-64|hex|hex-encoded|rot13|encoded|decoded|obfuscated|encrypted)\s+(?:instructions?|text|payload|string|message|command|blob)\b/),
  rule("decode", /\b(?:the following|this|below)\s+(?:is\s+)?(?:a\s+)?(?:base64|base-64|hex|rot13|encoded)\b[^.\n]{0,40}\b(?:instructions?|commands?|prompt)\b/),
];
