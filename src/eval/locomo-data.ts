import { createHash } from "node:crypto";
import type { Belief, Episode } from "../domain/model.js";
import { SENSITIVITY } from "../domain/model.js";

/**
 * Reads the public LoCoMo data format (snap-research/LoCoMo, data/locomo10.json): one memory
 * store per conversation; each observation is a belief whose provenance is
 * its dia_id(s); each dialog turn is an episode. Pure: JSON in, plain data out.
 */

export interface LocomoQuestion {
  question: string;
  evidence: string[];
  category: number;
}

export interface LocomoConversation {
  sampleId: string;
  speakers: string[];
  beliefs: Belief[];
  episodes: Episode[];
  /** belief id → the dia_ids it was observed in. */
  provenance: Map<string, string[]>;
  questions: LocomoQuestion[];
  /** Questions dropped because no evidence id survived normalisation. */
  skipped: number;
}

type Json = Record<string, unknown>;

/** Deterministic UUID (v5-shaped) from a name, so ids are the same on every run. */
export function stableUuid(name: string): string {
  const h = createHash("sha1").update(name).digest("hex");
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-5${h.slice(13, 16)}-${((parseInt(h.slice(16, 18), 16) & 0x3f) | 0x80).toString(16)}${h.slice(18, 20)}-${h.slice(20, 32)}`;
}

/** "D8:6; D9:17" → ["D8:6", "D9:17"]; "D:11:26" → ["D11:26"]; lists and comma-joined strings too. */
export function normaliseDiaIds(value: unknown): string[] {
  const raw = Array.isArray(value) ? value.map(String) : [String(value ?? "")];
  const out: string[] = [];
  for (const part of raw.flatMap((r) => r.split(/[;,]/))) {
    const m = part.trim().match(/^D:?(\d+):(\d+)$/);
    if (m && !out.includes(`D${m[1]}:${m[2]}`)) out.push(`D${m[1]}:${m[2]}`);
  }
  return out;
}

const MONTHS = ["january", "february", "march", "april", "may", "june", "july", "august", "september", "october", "november", "december"];

/** "1:56 pm on 8 May, 2023" → 2023-05-08T13:56:00Z. */
export function parseSessionDate(text: string): Date {
  const m = text.trim().match(/^(\d{1,2}):(\d{2})\s*(am|pm)\s+on\s+(\d{1,2})\s+([A-Za-z]+),?\s+(\d{4})$/i);
  if (!m) throw new Error(`unrecognised session date "${text}"`);
  const month = MONTHS.indexOf(m[5]!.toLowerCase());
  if (month < 0) throw new Error(`unrecognised month in "${text}"`);
  let hour = Number(m[1]) % 12;
  if (m[3]!.toLowerCase() === "pm") hour += 12;
  return new Date(Date.UTC(Number(m[6]), month, Number(m[4]), hour, Number(m[2])));
}

export function readConversation(sample: Json): LocomoConversation {
  const sampleId = String(sample.sample_id);
  const conversation = sample.conversation as Json;
  const speakers = [String(conversation.speaker_a), String(conversation.speaker_b)];
  const sessionDates = new Map<number, Date>();
  for (const [key, value] of Object.entries(conversation)) {
    const m = key.match(/^session_(\d+)_date_time$/);
    if (m) sessionDates.set(Number(m[1]), parseSessionDate(String(value)));
  }

  const episodes: Episode[] = [];
  const episodeOf = new Map<string, string>();
  for (const [key, value] of Object.entries(conversation)) {
    const m = key.match(/^session_(\d+)$/);
    if (!m || !Array.isArray(value)) continue;
    const session = Number(m[1]);
    (value as Json[]).forEach((turn, index) => {
      const diaId = String(turn.dia_id);
      const episodeId = stableUuid(`${sampleId}/${diaId}`);
      episodeOf.set(diaId, episodeId);
      const caption = turn.blip_caption ? ` [shares ${String(turn.blip_caption)}]` : "";
      episodes.push({
        episodeId,
        sessionId: `${sampleId}/session_${session}`,
        occurredAt: sessionDates.get(session) ?? new Date(0),
        sequence: index,
        actor: String(turn.speaker),
        kind: "message",
        content: `${String(turn.text)}${caption}`,
        project: "locomo",
        archival: false,
        sensitivity: SENSITIVITY.personal,
      });
    });
  }

  const beliefs: Belief[] = [];
  const provenance = new Map<string, string[]>();
  const observations = (sample.observation ?? {}) as Json;
  for (const [key, bySpeaker] of Object.entries(observations)) {
    const m = key.match(/^session_(\d+)_observation$/);
    if (!m) continue;
    const at = sessionDates.get(Number(m[1])) ?? new Date(0);
    for (const [speaker, facts] of Object.entries(bySpeaker as Json)) {
      (facts as [string, unknown][]).forEach(([fact, dia], index) => {
        const diaIds = normaliseDiaIds(dia);
        const beliefId = stableUuid(`${sampleId}/${key}/${speaker}/${index}`);
        provenance.set(beliefId, diaIds);
        beliefs.push({
          beliefId,
          subject: speaker,
          statement: fact,
          beliefType: "observation",
          predicateKey: "",
          status: "active",
          confidence: 0.9,
          authority: "user",
          originScope: "locomo",
          scopeLevel: "user",
          portability: "portable",
          sensitivity: SENSITIVITY.personal,
          validFrom: at,
          validTo: null,
          recordedAt: at,
          retractedAt: null,
          supersedes: [],
          conflictsWith: [],
          evidenceCount: 1,
          lastEvidenceAt: at,
          expiresHint: null,
          flaggedForReview: false,
          sourceEpisodeIds: diaIds.map((d) => episodeOf.get(d)).filter((e): e is string => e !== undefined),
        });
      });
    }
  }

  let skipped = 0;
  const questions: LocomoQuestion[] = [];
  for (const qa of (sample.qa ?? []) as Json[]) {
    const evidence = normaliseDiaIds(qa.evidence ?? []);
    if (evidence.length === 0) {
      skipped += 1;
      continue;
    }
    questions.push({ question: String(qa.question), evidence, category: Number(qa.category) });
  }
  return { sampleId, speakers, beliefs, episodes, provenance, questions, skipped };
}
