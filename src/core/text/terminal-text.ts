// Text from a model, a command, a file or a file name, made safe to print on a terminal, and paths
// quoted as git quotes them. Pure: no I/O.
//
// A terminal acts on control characters: ESC starts sequences that retitle the window, move the
// cursor or erase lines; CR returns to the start of the line; C1 characters (U+0080–U+009F) are
// 8-bit forms of the same. Shown escaped, they can no longer hide or forge what an operator reads.

/** C0 (but tab and newline), DEL and C1 controls. */
// biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what it finds.
const CONTROL_KEEP_NEWLINE = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f]/g;
/** C0 (but tab), DEL and C1 controls: newlines escaped too. */
// biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what it finds.
const CONTROL_ALL = /[\u0000-\u0008\u000a-\u001f\u007f-\u009f]/g;

const NAMED: Readonly<Record<string, string>> = { "\n": "\\n", "\r": "\\r" };

function escapeOne(c: string): string {
  const named = NAMED[c];
  if (named !== undefined) return named;
  const code = c.charCodeAt(0);
  return code <= 0xff ? `\\x${code.toString(16).padStart(2, "0")}` : `\\u${code.toString(16)}`;
}

export interface TerminalTextOptions {
  /**
   * Keep line feeds as they are (the default): for a block of text the renderer prints as lines.
   * `false` escapes them as `\n`, for text that must stay on one line (a name, a status, a title).
   */
  readonly newlines?: boolean;
}

/**
 * `text` with every control character a terminal acts on written as a visible escape (`\x1b`,
 * `\r`, `\x9b`); tabs kept, line feeds kept unless `newlines: false`.
 */
export function terminalSafe(text: string, opts: TerminalTextOptions = {}): string {
  const pattern = opts.newlines === false ? CONTROL_ALL : CONTROL_KEEP_NEWLINE;
  pattern.lastIndex = 0;
  return pattern.test(text) ? text.replace(pattern, escapeOne) : text;
}

/** One line of text: line feeds escaped as well. */
export function terminalLine(text: string): string {
  return terminalSafe(text, { newlines: false });
}

const GIT_ESCAPES: Readonly<Record<number, string>> = {
  7: "\\a",
  8: "\\b",
  9: "\\t",
  10: "\\n",
  11: "\\v",
  12: "\\f",
  13: "\\r",
  34: '\\"',
  92: "\\\\",
};

const utf8 = new TextEncoder();

/**
 * A path as git writes it in a diff header with `core.quotePath` on (its default): unchanged when
 * every byte is printable ASCII other than `"` and `\`; otherwise in double quotes, with C escapes
 * for `\a \b \t \n \v \f \r " \\` and three-digit octal for every other control byte and every byte
 * of a non-ASCII character. A quoted name never holds a raw line feed, so it cannot forge a line.
 */
export function gitQuotePath(name: string): string {
  const bytes = utf8.encode(name);
  let plain = true;
  for (const b of bytes) {
    if (b < 0x20 || b >= 0x7f || b === 0x22 || b === 0x5c) {
      plain = false;
      break;
    }
  }
  if (plain) return name;
  let out = '"';
  for (const b of bytes) {
    const named = GIT_ESCAPES[b];
    if (named !== undefined) out += named;
    else if (b < 0x20 || b >= 0x7f) out += `\\${b.toString(8).padStart(3, "0")}`;
    else out += String.fromCharCode(b);
  }
  return `${out}"`;
}

const GIT_UNESCAPES: Readonly<Record<string, number>> = {
  a: 7,
  b: 8,
  t: 9,
  n: 10,
  v: 11,
  f: 12,
  r: 13,
  '"': 34,
  "\\": 92,
};

const strictUtf8 = new TextDecoder("utf-8", { fatal: true });

/**
 * The name a diff header's path stands for: a name in double quotes is read back as
 * `gitQuotePath` writes it (C escapes, three-digit octal bytes, UTF-8); any other text is the name
 * itself. `undefined` for a quoted name that is not well formed (an unknown escape, an octal
 * escape past 377, a stray quote, bytes that are not UTF-8).
 */
export function gitUnquotePath(text: string): string | undefined {
  if (!text.startsWith('"')) return text;
  if (text.length < 2 || !text.endsWith('"')) return undefined;
  const bytes: number[] = [];
  const body = text.slice(1, -1);
  for (let i = 0; i < body.length; i++) {
    const c = body[i] as string;
    if (c === '"') return undefined;
    if (c !== "\\") {
      for (const b of utf8.encode(c)) bytes.push(b);
      continue;
    }
    const next = body[i + 1];
    if (next === undefined) return undefined;
    const named = GIT_UNESCAPES[next];
    if (named !== undefined) {
      bytes.push(named);
      i += 1;
      continue;
    }
    const octal = /^[0-7]{3}/.exec(body.slice(i + 1, i + 4));
    if (octal === null) return undefined;
    const value = Number.parseInt(octal[0], 8);
    if (value > 0xff) return undefined;
    bytes.push(value);
    i += 3;
  }
  try {
    return strictUtf8.decode(new Uint8Array(bytes));
  } catch {
    return undefined;
  }
}
