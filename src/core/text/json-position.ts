// Where a JSON text stops parsing, as a person looks for it: line and column (1-based, in
// characters), not the parser's offset.

export interface JsonSyntaxError {
  /** The parser's message without its offset (`Expected ',' or '}' after property value`). */
  readonly message: string;
  readonly line?: number;
  readonly column?: number;
}

/** Line and column (1-based) of the UTF-16 offset `position` in `text`. */
export function lineColumnAt(text: string, position: number): { line: number; column: number } {
  let line = 1;
  let lineStart = 0;
  const end = Math.min(position, text.length);
  for (let i = 0; i < end; i++) {
    if (text.charCodeAt(i) === 10) {
      line++;
      lineStart = i + 1;
    }
  }
  return { line, column: Array.from(text.slice(lineStart, end)).length + 1 };
}

/** The error JSON.parse threw on `text`, its `at position N` turned into a line and column. */
export function jsonSyntaxError(text: string, error: unknown): JsonSyntaxError {
  const raw = error instanceof Error ? error.message : String(error);
  const m = / in JSON at position (\d+)(?: \(line \d+ column \d+\))?/.exec(raw);
  if (m?.[1] === undefined) {
    if (/Unexpected end of JSON input/.test(raw)) {
      const at = lineColumnAt(text, text.length);
      return { message: "unexpected end of the JSON text", ...at };
    }
    return { message: raw };
  }
  const message = `${raw.slice(0, m.index)}${raw.slice(m.index + m[0].length)}`;
  return { message, ...lineColumnAt(text, Number(m[1])) };
}
