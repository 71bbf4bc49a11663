// What a failure says: the tail of a command's output (a check's `detail`, the implementer's next
// evidence) and a failed step's reason (a patch that does not apply, a refused path, a limit).
// Imports nothing: the console's page uses it too.

/** At most this many lines of output in a check's detail… */
export const TAIL_LINES = 40;
/** …and at most this many bytes (UTF-8). */
export const TAIL_BYTES = 4096;

const encoder = new TextEncoder();
const decoder = new TextDecoder();

interface Tail {
  readonly text: string;
  readonly lines: number;
  readonly bytes: number;
}

const NONE: Tail = { text: "", lines: 0, bytes: 0 };

/** The last lines of `text` within both bounds (a line longer than the byte bound keeps its end). */
function tailOf(text: string, maxLines: number, maxBytes: number): Tail {
  const trimmed = text.replace(/\s+$/, "");
  if (trimmed === "" || maxLines <= 0 || maxBytes <= 0) return NONE;
  const kept: string[] = [];
  let bytes = 0;
  const all = trimmed.split("\n");
  for (let i = all.length - 1; i >= 0 && kept.length < maxLines; i -= 1) {
    const line = all[i] as string;
    const size = encoder.encode(line).length + (kept.length === 0 ? 0 : 1);
    if (bytes + size > maxBytes) {
      if (kept.length === 0) {
        // One line past the bound: its end, cut at a character boundary.
        const b = encoder.encode(line);
        const end = decoder.decode(b.slice(b.length - maxBytes)).replace(/^\uFFFD+/, "");
        return { text: end, lines: 1, bytes: encoder.encode(end).length };
      }
      break;
    }
    kept.unshift(line);
    bytes += size;
  }
  return { text: kept.join("\n"), lines: kept.length, bytes };
}

/**
 * The tail of a command's output: the last TAIL_LINES lines and TAIL_BYTES bytes of stderr and
 * stdout together, stderr first when both have text (each keeps at least half the bounds when the
 * other has that much). Empty when neither has text.
 */
export function outputTail(stdout: string, stderr: string): string {
  const hasOut = stdout.trim() !== "";
  const hasErr = stderr.trim() !== "";
  if (!hasErr) return tailOf(stdout, TAIL_LINES, TAIL_BYTES).text;
  if (!hasOut) return tailOf(stderr, TAIL_LINES, TAIL_BYTES).text;
  // stdout's fair share first, then stderr takes what is left, then stdout what stderr left.
  const share = tailOf(stdout, TAIL_LINES / 2, TAIL_BYTES / 2);
  const err = tailOf(stderr, TAIL_LINES - share.lines, TAIL_BYTES - share.bytes - 1);
  const out = tailOf(stdout, TAIL_LINES - err.lines, TAIL_BYTES - err.bytes - 1);
  return `${err.text}\n${out.text}`;
}

/** A command check's detail: `<profile> exited N: ` and the tail of what it printed. */
export function commandDetail(
  profile: string,
  exitCode: number | null,
  stdout: string,
  stderr: string,
): string {
  return `${profile} exited ${String(exitCode)}: ${outputTail(stdout, stderr)}`;
}

/** What a step record says about how it ended (a StepRecord is one). */
export interface StepFacts {
  readonly status: string;
  readonly action: string;
  readonly refusal?: string | undefined;
  readonly excerpt?: string | undefined;
  readonly findings?: readonly { readonly code: string; readonly message: string }[] | undefined;
}

/**
 * Why a failed step failed, when it is more than a command's exit status: the limit it hit, what
 * the host refused or met (a path leaving the workspace, a special file), or why a patch did not
 * apply. Undefined for a step that did not fail, or a command that only exited non-zero.
 */
export function stepFailureReason(step: StepFacts): string | undefined {
  if (step.status !== "failed") return undefined;
  const findings = (step.findings ?? []).map((f) => `${f.code}: ${f.message}`);
  if (findings.length > 0) return findings.join("\n");
  const excerpt = step.excerpt?.trim() ?? "";
  if (step.refusal !== undefined)
    return excerpt === "" ? step.refusal : `${step.refusal}: ${excerpt}`;
  if (step.action === "patch" && excerpt !== "") return excerpt;
  return undefined;
}
