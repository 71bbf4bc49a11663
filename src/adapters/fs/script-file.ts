// A scripted model's JSONL file, read without surprises: only a regular file is opened (a FIFO
// would block the reader for ever), and every refusal is `model/script` with its reason (`missing`,
// `not-regular-file`, `unreadable`, `too-large` past 64 MiB, `line` with the line number in the
// message).
import { closeSync, constants, fstatSync, openSync, readFileSync } from "node:fs";
import { fail, ok, type Result, WarrantError } from "../../core/result.js";
import {
  parseScriptLines,
  type ScriptedAnswer,
  type ScriptLine,
} from "../models/scripted-model.js";

export type ScriptFileReason = "missing" | "not-regular-file" | "unreadable" | "too-large" | "line";

/** A script is one JSON line per model call: far below this. */
export const MAX_SCRIPT_BYTES = 64 * 1024 * 1024;

function refuse(file: string, reason: ScriptFileReason, why: string): Result<never> {
  return fail([{ code: "model/script", path: "", message: `${file}: ${why}`, detail: { reason } }]);
}

export function readScriptFile(file: string): Result<ScriptedAnswer[]> {
  const lines = readScriptLines(file);
  return lines.ok ? ok(lines.value.map((l) => l.answer)) : lines;
}

/** As readScriptFile, each answer with the line it is written on. */
export function readScriptLines(file: string): Result<ScriptLine[]> {
  let fd: number;
  try {
    fd = openSync(file, constants.O_RDONLY | constants.O_NONBLOCK | constants.O_NOCTTY);
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    return code === "ENOENT" || code === "ENOTDIR"
      ? refuse(file, "missing", "no such file")
      : refuse(file, "unreadable", `cannot be read (${code ?? "error"})`);
  }
  let text: string;
  try {
    const st = fstatSync(fd);
    if (!st.isFile()) return refuse(file, "not-regular-file", "not a regular file");
    if (st.size > MAX_SCRIPT_BYTES)
      return refuse(file, "too-large", `larger than ${MAX_SCRIPT_BYTES} bytes`);
    text = readFileSync(fd, "utf8");
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    return refuse(file, "unreadable", `cannot be read (${code ?? "error"})`);
  } finally {
    closeSync(fd);
  }
  try {
    return ok(parseScriptLines(text));
  } catch (e) {
    return refuse(file, "line", e instanceof WarrantError ? e.message : "it does not parse");
  }
}
