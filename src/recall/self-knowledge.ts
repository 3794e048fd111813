/**
 * Explicit self-knowledge questions ("How do I like my coffee?", "What's my
 * wife's name?", "Which vehicle do I drive?") anchor the structured arm to
 * the belief type they ask about, at the type-only anchor weight
 * (policy.typeAnchorWeight, 0.25; an exact subject is 1.0). That bounded
 * profile lookup finds a paraphrased personal detail that shares no content
 * word with the question, and only the requested types are candidates, so
 * unrelated personal types cannot crowd them out of the candidate cap.
 *
 * Deterministic, no model call: a small rule table over the normalised text.
 * Every rule needs a first-person reference ("I", "my", "am I") *and* a
 * profile predicate (like/prefer, a kin or social role, an identity attribute,
 * own/drive/use, a recurring time). A first-person "how do I …" question
 * without one ("How do I deploy this service?") is a how-to question, and a
 * clause asking for advice ("Which car should I buy?") never activates it,
 * whatever else it contains.
 *
 * Each clause of a compound question is read on its own, so "What's my wife's
 * name and which coffee do I like?" keeps both its types, and an advice clause
 * does not silence the question beside it.
 */

export interface SelfKnowledgeRule {
  /** What the rule recognises, for tests and for the list of cues in docs/ranking.md. */
  cue: string;
  types: readonly string[];
  pattern: RegExp;
}

const PREFERENCE = ["preference"] as const;
const RELATIONSHIP = ["relationship"] as const;
const USER_MODEL = ["user_model_attr"] as const;
/** A routine may be recorded as either a preference or an attribute of the user. */
const ROUTINE = ["preference", "user_model_attr"] as const;

const ADVERBS = String.raw`(?:\s+(?:really|usually|generally|typically|normally|still|also|actually|even|ever|always|never|not|most|particularly|especially))*`;
const KIN_AND_SOCIAL =
  "wife|husband|spouse|partner|girlfriend|boyfriend|fianc[eé]e?|ex|mother|mom|mum|mommy|mummy|father|dad|daddy|parents?|" +
  "brothers?|sisters?|siblings?|twin|sons?|daughters?|kids?|child|children|babies|baby|family|relatives?|" +
  "friends?|buddy|bestie|boss|manager|colleagues?|co-?workers?|teammates?|cousins?|aunts?|uncles?|" +
  "grandmother|grandma|grandfather|grandpa|grandparents?|grandchildren|grandkids?|grandsons?|granddaughters?|" +
  "nieces?|nephews?|in-laws|mother-in-law|father-in-law|step(?:mom|mum|dad|mother|father|son|daughter)|" +
  "roommates?|flatmates?|housemates?|neighbou?rs?|mentors?|mentees?|therapist|doctor|dentist|landlord|landlady|" +
  // Pets: "Andy's dog is Pixel" is a relationship, not a possession.
  "pets?|dogs?|cats?|puppy|kitten";
const IDENTITY_ATTRIBUTES =
  "(?:full |first |last |middle |maiden |legal )?name|nickname|surname|age|birthday|birth ?date|date of birth|birthplace|" +
  "job|job title|role|occupation|profession|career|employer|workplace|salary|" +
  "address|home ?town|home city|home country|home address|nationality|citizenship|ethnicity|" +
  "email(?: address)?|phone number|height|weight|diet|dietary \\w+|religion|faith|" +
  "native language|first language|mother tongue|languages?|pronouns|gender|" +
  "education|degree|major|alma mater|zodiac(?: sign)?|star sign|blood type|time ?zone|allerg(?:y|ies)|health|medications?|personality";
const TIME_OF_LIFE =
  "mornings?|afternoons?|evenings?|nights?|weekends?|weekdays?|breakfast|lunch|dinner|bedtime|" +
  "(?:mon|tues|wednes|thurs|fri|satur|sun)days?|holidays?|vacations?|summers?|winters?|after work|before work";
const DAYS = "(?:mon|tues|wednes|thurs|fri|satur|sun)day";

/** The rule table. Patterns run on one normalised clause (see `clauses`). */
export const SELF_KNOWLEDGE_RULES: readonly SelfKnowledgeRule[] = [
  // Preferences.
  {
    cue: 'I (really/usually …) like, love, enjoy, prefer, hate, dislike: "which coffee do I like"',
    types: PREFERENCE,
    pattern: new RegExp(String.raw`\bi${ADVERBS}\s+(?:like|love|enjoy|prefer|hate|dislike|loathe|adore|fancy)\b`),
  },
  {
    cue: 'my favourite / preferences / tastes / hobbies / interests: "what is my favourite restaurant"',
    types: PREFERENCE,
    pattern: /\bmy\s+(?:(?:all-time|absolute|current|usual)\s+)?(?:favou?rites?|preferences?|preferred|tastes?|likes|dislikes|hobby|hobbies|interests?|go-to|pet peeves?)\b/,
  },
  {
    cue: 'am I into / a fan of / keen on: "what music am I into"',
    types: PREFERENCE,
    pattern: /\b(?:am i|i am)\s+(?:really\s+|still\s+)?(?:into|a (?:big )?fan of|fond of|keen on|interested in|partial to)\b/,
  },
  {
    cue: 'how do I take / drink / order my …: "how do I take my tea"',
    types: PREFERENCE,
    pattern: /\bhow (?:do|did) i\s+(?:usually\s+|normally\s+)?(?:take|drink|eat|order|want)\s+my\b/,
  },
  {
    cue: 'what kind of … do I listen to / read / watch / eat: "what kind of books do I read"',
    types: PREFERENCE,
    pattern: /\bwhat (?:kinds?|sorts?|types?|genres?|styles?) of\b.{1,40}?\b(?:do|did) i\s+(?:usually\s+)?(?:listen|read|watch|eat|drink|wear|cook|play)\b/,
  },
  {
    cue: 'I usually / always order, drink, eat, wear …: "what do I usually order at Luigi\'s"',
    types: PREFERENCE,
    pattern: /\bi\s+(?:usually|normally|typically|always|generally)\s+(?:order|drink|eat|wear|listen to|read|watch)\b/,
  },
  // Relationships.
  {
    cue: 'my + a kin or social role: "my wife", "my best friend", "my boss"',
    types: RELATIONSHIP,
    pattern: new RegExp(
      String.raw`\bmy\s+(?:(?:late|ex|step|future|older|younger|little|big|eldest|oldest|youngest|best|closest|new|old|twin)[-\s]+)*(?:${KIN_AND_SOCIAL})\b`,
    ),
  },
  {
    cue: 'who am I married to / dating / working with: "who do I report to"',
    types: RELATIONSHIP,
    pattern:
      /\bwho (?:am|was|do|did|have) i\s+(?:\w+\s+)?(?:married|engaged|dating|seeing|related|living with|live with|work with|working with|report to|reporting to|friends with|close to)\b/,
  },
  {
    cue: 'am I married / single / dating: "am I still married"',
    types: RELATIONSHIP,
    pattern: /\b(?:am i|was i|i am)\s+(?:still\s+)?(?:married|single|engaged|divorced|widowed|dating|in a relationship|seeing (?:anyone|someone))\b/,
  },
  {
    cue: 'do I have kids / siblings, how many children do I have',
    types: RELATIONSHIP,
    pattern:
      /\b(?:(?:do|did) i have (?:any |a |an |two |three )?(?:kids|children|siblings|brothers?|sisters?|sons?|daughters?|wife|husband|partner|girlfriend|boyfriend|twin|grandchildren|grandkids|cousins)\b|how many (?:kids|children|siblings|brothers|sisters|grandchildren|grandkids|cousins) (?:do|did) i have\b)/,
  },
  // Identity and ownership: user-model attributes.
  {
    cue: 'who am I (not "who am I talking to")',
    types: USER_MODEL,
    pattern: /\bwho am i\b(?!\s+(?:\w+\s+)?(?:married|engaged|dating|seeing|related|talking|speaking|chatting|working|living|friends))/,
  },
  {
    cue: 'my + an identity attribute: "what is my name", "my job", "my hometown", "my allergies"',
    types: USER_MODEL,
    pattern: new RegExp(String.raw`\bmy\s+(?:${IDENTITY_ATTRIBUTES})\b`),
  },
  {
    cue: 'how old am I, when / where was I born',
    types: USER_MODEL,
    pattern: /\b(?:how old am i|(?:when|where) was i born)\b/,
  },
  {
    cue: 'where do I live / work / come from, where am I from / based',
    types: USER_MODEL,
    pattern:
      /\bwhere (?:(?:do|did) i\s+(?:currently\s+|usually\s+|originally\s+)?(?:live|stay|reside|work|study|grow up|go to (?:school|college|university)|come from)|am i\s+(?:originally\s+|currently\s+)?(?:from|based|living|located|working|staying))\b/,
  },
  {
    cue: 'what do I do for a living / for work',
    types: USER_MODEL,
    pattern: /\bwhat (?:do|did) i do for (?:a )?(?:living|work|a job)\b/,
  },
  {
    cue: 'what / which … do I own / drive / ride / have / use / wear / speak / play ("… do I have to …" is not)',
    types: USER_MODEL,
    pattern:
      /\b(?:what|which)\b(?!\s+(?:options?|choices?|alternatives?|steps?|permissions?|access|errors?|issues?|problems?|tasks?|bugs?|tickets?|time)\b)(?:\s+[\w-]+){0,4}?\s+(?:do|did) i\s+(?:currently\s+|still\s+|usually\s+|normally\s+)?(?:own|drive|ride|have|use|wear|speak|play|work (?:at|for))\b(?!\s+to\b)/,
  },
  {
    cue: 'which team / company … am I on / in: "which team am I on"',
    types: USER_MODEL,
    pattern: /\b(?:what|which) (?:team|group|club|department|company|org|organi[sz]ation) am i\s+(?:on|in|part of|with)\b/,
  },
  {
    cue: 'do I own / drive / ride / speak …',
    types: USER_MODEL,
    pattern: /\bdo i\s+(?:still\s+)?(?:own|drive|ride|speak)\b/,
  },
  {
    cue: 'am I vegetarian / allergic / left-handed / a night owl …',
    types: USER_MODEL,
    pattern:
      /\b(?:am i|i am)\s+(?:still\s+)?(?:an?\s+)?(?:vegetarian|vegan|pescatarian|allergic|lactose|gluten|left-handed|right-handed|diabetic|colou?r-?blind|religious|introvert|extrovert|morning person|night owl)\b/,
  },
  {
    cue: 'what do you know about me, tell me about myself: every personal type',
    types: ["preference", "relationship", "user_model_attr"],
    pattern: /\b(?:(?:know|remember|tell me) about (?:me|myself)|who i am)\b/,
  },
  // Temporal routines: either type can hold a routine.
  {
    cue: 'my routine / habits / rituals: "what is my morning routine"',
    types: ROUTINE,
    pattern: /\bmy\s+(?:[\w-]+\s+){0,2}?(?:routines?|habits?|rituals?)\b/,
  },
  {
    cue: 'do I drink / eat / smoke / exercise …: "do I drink coffee"',
    types: ROUTINE,
    pattern: /\bdo i\s+(?:still\s+|ever\s+)?(?:drink|eat|smoke|cook|exercise|meditate|swim|cycle|jog)\b/,
  },
  {
    cue: 'I … every morning / on Sundays / on Sunday mornings / in the evenings',
    types: ROUTINE,
    pattern: new RegExp(
      String.raw`\bi\b.*\b(?:(?:every|each)\s+(?:single\s+)?(?:day|morning|afternoon|evening|night|week|weekend|weekday|month|year|summer|winter|${DAYS})|on\s+(?:${DAYS}s|weekends|weekdays)|on\s+${DAYS}\s+(?:mornings|afternoons|evenings|nights)|(?:in the|most)\s+(?:mornings|afternoons|evenings|nights)|at weekends)\b`,
    ),
  },
  {
    cue: 'I usually / typically / tend to … + a time of day, week or year: "what do I usually eat for breakfast"',
    types: ROUTINE,
    pattern: new RegExp(
      String.raw`\bi\b.*\b(?:usually|typically|normally|generally|often|regularly|always|tend to|habitually)\b.*\b(?:${TIME_OF_LIFE})\b|\b(?:${TIME_OF_LIFE})\b.*\bi\s+(?:usually|typically|normally|generally|often|regularly|always|tend to)\b`,
    ),
  },
];

/**
 * Advice and recommendation clauses never activate the lookup: "Which car
 * should I buy?" asks what to do, not what is known about the user.
 */
export const ADVICE_CUES: RegExp =
  /\b(?:should|shall|ought to|recommend\w*|suggest\w*|advice|advise|tips?|is it (?:better|worth|wise|smart|a good idea)|(?:best|better) (?:for|to)|what would you|help me (?:choose|decide|pick))\b|\b(?:which|what)\b.*\bto (?:buy|get|choose|pick)\b/;

/** The requested belief types of a text's self-knowledge clauses, sorted and deduplicated. */
export function selfKnowledgeTypes(text: string | null): string[] {
  const types = new Set<string>();
  for (const rule of selfKnowledgeCues(text)) for (const t of rule.types) types.add(t);
  return [...types].sort();
}

/** The rules that fire, clause by clause, in table order (a rule is listed once). */
export function selfKnowledgeCues(text: string | null): SelfKnowledgeRule[] {
  const fired = new Set<SelfKnowledgeRule>();
  for (const clause of clauses(text ?? "")) {
    if (ADVICE_CUES.test(clause)) continue;
    for (const rule of SELF_KNOWLEDGE_RULES) if (rule.pattern.test(clause)) fired.add(rule);
  }
  return SELF_KNOWLEDGE_RULES.filter((r) => fired.has(r));
}

/**
 * Lower-cased, contractions spelled out ("what's" → "what is", "I'm" →
 * "i am"), split into clauses at sentence punctuation, commas and
 * coordinating conjunctions.
 */
export function clauses(text: string): string[] {
  const normalised = text
    .toLowerCase()
    .replace(/[’‘`]/g, "'")
    .replace(/\b(what|who|where|when|how|that|it)'s\b/g, "$1 is")
    .replace(/\bi'm\b/g, "i am")
    .replace(/\bi've\b/g, "i have")
    .replace(/\bi'd\b/g, "i would")
    .replace(/\bi'll\b/g, "i will")
    .replace(/\bcan't\b/g, "can not")
    .replace(/n't\b/g, " not");
  return normalised
    .split(/[?!.;:,]+|\s(?:and|but|also|plus|or)\s/)
    .map((c) => c.replace(/\s+/g, " ").trim())
    .filter((c) => c.length > 0);
}
