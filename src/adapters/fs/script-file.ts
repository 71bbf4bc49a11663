// A scripted model's JSONL file, read without surprises: only a regular file is opened (a FIFO
// would block the reader for ever), and every refusal is `model/script` with its reason (`missing`,
// `not-regular-file`, `unreadable`, `line` with the line number in the message).
import { closeSync, constants, fstatSync, openSync, readFileSync } from "node:fs";
import { fail, ok, type Result, WarrantError } from "../../core/result.js";
import { parseScript, type ScriptedAnswer } from "../models/scripted-model.js";

export type ScriptFileReason = "missing" | "not-regular-file" | "unreadable" | "line";

function refuse(file: string, reason: ScriptFileReason, why: string): Result<never> {
  return fail([{ code: "model/script", path: "", message: `${file}: ${why}`, detail: { reason } }]);
}

export function readScriptFile(file: string): Result<ScriptedAnswer[]> {
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
    if (!fstatSync(fd).isFile()) return refuse(file, "not-regular-file", "not a regular file");
    text = readFileSync(fd, "utf8");
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    return refuse(file, "unreadable", `cannot be read (${code ?? "error"})`);
  } finally {
    closeSync(fd);
  }
  try {
    return ok(parseScript(text));
  } catch (e) {
    return refuse(file, "line", e instanceof WarrantError ? e.message : "it does not parse");
  }
}
