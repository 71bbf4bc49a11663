// The message of the commit `warrant apply --git` makes: a subject (the text's first sentence, at
// most 72 characters), the full text, then Warrant's trailers as the last paragraph. The text comes
// from a model: no line of it can be read by git's trailer parser as a trailer, nor hide the
// trailers that follow it.

export const SUBJECT_MAX = 72;

/**
 * The first sentence of the text's first paragraph (its lines joined), without a final period,
 * cut at the last word boundary within 72 characters (no ellipsis; a single longer word is cut at
 * 72). Control characters become spaces.
 */
export function subjectOf(text: string): string {
  const paragraph = (text.trim().split(/\r?\n[ \t]*\r?\n/)[0] ?? "")
    // biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what it finds.
    .replace(/[\u0000-\u001f\u007f-\u009f]+/g, " ")
    .replace(/\s+/g, " ")
    .trim();
  const sentence = (/^(.+?[.!?])(\s|$)/.exec(paragraph)?.[1] ?? paragraph).replace(/\.$/, "");
  if (sentence.length <= SUBJECT_MAX) return sentence;
  const head = sentence.slice(0, SUBJECT_MAX + 1);
  const space = head.lastIndexOf(" ");
  const cut = space > 0 ? head.slice(0, space) : sentence.slice(0, SUBJECT_MAX);
  return cut.replace(/[\s,;:-]+$/, "");
}

/**
 * A line git could take for a trailer (`Token: value`, `Token = value`, `Token # value`, a
 * cherry-pick note) or for the end of the message (a `---` divider, a `#` comment or scissors line).
 */
const TRAILER_SHAPED = /^(?:[A-Za-z0-9-]+[ \t]*[:=#]|\(cherry picked from commit |---|#)/;

/** `text` with every trailer-shaped line indented by two spaces: git parses none of it as a trailer. */
export function trailerSafe(text: string): string {
  return text
    .split("\n")
    .map((line) => (TRAILER_SHAPED.test(line) ? `  ${line}` : line))
    .join("\n");
}

/**
 * Subject, blank line, the full text (when it says more than the subject), blank line, the trailers
 * (`Key: value` each), ending in a newline.
 */
export function commitMessage(text: string, trailers: readonly [string, string][]): string {
  const full = text.trim();
  const subject = subjectOf(full);
  const body = full === subject || full === `${subject}.` ? [] : ["", trailerSafe(full)];
  // A subject is never the last paragraph, so never read as trailers; only a line that could end
  // the message early (a comment or scissors line, a divider) is indented.
  const first = /^(?:#|---)/.test(subject) ? `  ${subject}` : subject;
  return `${[first, ...body, "", ...trailers.map(([k, v]) => `${k}: ${v}`)].join("\n")}\n`;
}
