/**
 * A formation loop to start from, not a finished one: after each turn, ask a model behind any
 * OpenAI-compatible chat endpoint (OpenAI, vLLM, Ollama, llama.cpp's server, …) what the turn
 * taught about the user, and write its answer with the SDK's remember / replace.
 *
 * Deciding what is true is formation's job and stays outside the sidecar; this example shows the
 * boundary: the model sees the turn and the memories the turn's recall showed (by their short ids),
 * and answers with operations; the code checks each one and writes it. What to keep in a real
 * formation: a better prompt, evidence (source_episode_ids from appendEpisodes), confidence from
 * corroboration, provisional status for what is only inferred, and review of what the model wants
 * to replace. See docs/writing-memories.md.
 */
import { citedIds, type RecallClient, type RecallResult } from "@recall-memory/sidecar";

export interface ChatMessage {
  role: "system" | "user" | "assistant";
  content: string;
}

export interface FormationOptions {
  memory: RecallClient;
  /** The endpoint's base URL, e.g. "https://api.openai.com/v1" or "http://127.0.0.1:11434/v1". */
  baseUrl: string;
  model: string;
  apiKey?: string;
  /** The turn's messages (at least the user's, usually the assistant's answer too). */
  messages: readonly ChatMessage[];
  /** The recall the turn was answered with: the memories the model may replace, by short id. */
  recalled?: RecallResult;
}

/** One operation the model proposed, and what became of it. */
export type FormationOutcome =
  | { op: "remember"; subject: string; statement: string; beliefId: string }
  | { op: "replace"; replaced: string; statement: string; beliefId: string }
  | { op: "skipped"; reason: string; proposed: unknown };

const INSTRUCTIONS = `You maintain an assistant's long-term memory about its user.
From the conversation turn below, list only durable facts the user stated or clearly confirmed
(preferences, personal facts, standing constraints). Ignore small talk and one-off requests.
If a known memory is now wrong, replace it by its id instead of adding a contradicting one.
Answer with JSON only: {"operations": [
  {"op": "remember", "subject": "<who or what>", "statement": "<one self-contained sentence>"},
  {"op": "replace", "id": "[m:…]", "statement": "<the corrected sentence>"}
]}. An empty list is a fine answer.`;

/** Asks the model for the turn's memory operations and writes them; returns what happened to each. */
export async function formFromTurn(options: FormationOptions): Promise<FormationOutcome[]> {
  // The block as the turn showed it: its short ids are the ones the model may name.
  const known = options.recalled?.rendered.trim() || "(none)";
  const transcript = options.messages.map((m) => `${m.role}: ${m.content}`).join("\n");
  const reply = await chat(options, [
    { role: "system", content: INSTRUCTIONS },
    { role: "user", content: `Known memories:\n${known}\n\nTurn:\n${transcript}` },
  ]);
  const outcomes: FormationOutcome[] = [];
  for (const proposed of operations(reply)) outcomes.push(await apply(options, proposed));
  return outcomes;
}

async function chat(options: FormationOptions, messages: ChatMessage[]): Promise<string> {
  const response = await fetch(`${options.baseUrl.replace(/\/$/, "")}/chat/completions`, {
    method: "POST",
    headers: { "content-type": "application/json", ...(options.apiKey ? { authorization: `Bearer ${options.apiKey}` } : {}) },
    body: JSON.stringify({ model: options.model, messages, temperature: 0, response_format: { type: "json_object" } }),
    signal: AbortSignal.timeout(30_000),
  });
  if (!response.ok) throw new Error(`chat endpoint answered ${response.status}: ${(await response.text()).slice(0, 200)}`);
  const body = (await response.json()) as { choices?: { message?: { content?: string } }[] };
  return body.choices?.[0]?.message?.content ?? "";
}

/** The operations of the model's answer; an answer that is not the asked-for JSON has none. */
function operations(reply: string): unknown[] {
  try {
    const parsed = JSON.parse(reply.replace(/^```(?:json)?\s*|\s*```$/g, "")) as { operations?: unknown };
    return Array.isArray(parsed.operations) ? parsed.operations : [];
  } catch {
    return [];
  }
}

/** Writes one proposed operation after checking it: the model's output is input, never trusted as is. */
async function apply(options: FormationOptions, proposed: unknown): Promise<FormationOutcome> {
  const op = proposed as { op?: unknown; subject?: unknown; statement?: unknown; id?: unknown };
  const text = (v: unknown) => (typeof v === "string" && v.trim() !== "" && v.length <= 500 ? v.trim() : null);
  const statement = text(op.statement);
  if (!statement) return { op: "skipped", reason: "no statement", proposed };
  if (op.op === "remember") {
    const subject = text(op.subject);
    if (!subject) return { op: "skipped", reason: "no subject", proposed };
    // Inferred by a model from what the user said: not user-stated until the user affirms it.
    const { beliefId } = await options.memory.remember(subject, statement, { authority: "inferred", confidence: 0.7 });
    return { op: "remember", subject, statement, beliefId };
  }
  if (op.op === "replace") {
    // Only a memory this turn was shown may be replaced, named by the short id it was shown with.
    const [old] = options.recalled && typeof op.id === "string" ? citedIds(op.id, options.recalled) : [];
    if (!old) return { op: "skipped", reason: "replace names no memory this turn was shown", proposed };
    const { beliefId } = await options.memory.replace(old, statement, { authority: "inferred", confidence: 0.7 });
    return { op: "replace", replaced: old, statement, beliefId };
  }
  return { op: "skipped", reason: "unknown op", proposed };
}
