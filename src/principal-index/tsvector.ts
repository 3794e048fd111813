/**
 * A tsvector's text form ('lexeme':1A,5,7C …), as PostgreSQL prints it,
 * read into lexemes with the weight label of each position (A-D; a
 * position without a label is D). Only what BM25F needs: which lexemes a
 * belief holds and, per lexeme, its positions' labels in order.
 */
export interface TsEntry {
  lexeme: string;
  /** One label per position, in position order: "AB" is one A and one B occurrence. */
  labels: string;
}

export function parseTsvector(text: string): TsEntry[] {
  const entries: TsEntry[] = [];
  let i = 0;
  while (i < text.length) {
    if (text[i] !== "'") {
      i += 1;
      continue;
    }
    // Quoted lexeme: '' is a quote, \x is x.
    let lexeme = "";
    i += 1;
    for (;;) {
      const c = text[i];
      if (c === undefined) break;
      if (c === "\\") {
        lexeme += text[i + 1] ?? "";
        i += 2;
      } else if (c === "'" && text[i + 1] === "'") {
        lexeme += "'";
        i += 2;
      } else if (c === "'") {
        i += 1;
        break;
      } else {
        lexeme += c;
        i += 1;
      }
    }
    let labels = "";
    if (text[i] === ":") {
      i += 1;
      while (i < text.length && text[i] !== " ") {
        let j = i;
        while (j < text.length && text[j]! >= "0" && text[j]! <= "9") j += 1;
        const label = text[j];
        if (label === "A" || label === "B" || label === "C" || label === "D") {
          labels += label;
          j += 1;
        } else {
          labels += "D";
        }
        i = text[j] === "," ? j + 1 : j;
      }
    }
    entries.push({ lexeme, labels });
  }
  return entries;
}
