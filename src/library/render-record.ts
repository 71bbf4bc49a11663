// Readable renderings of ledger records for a terminal: pure functions of a record's body (and, for
// an execution, of the run report kept beside it and the loop's operator acts), so that the command
// line's `warrant record` and `show --records` and any other reader print the same text. A body that
// does not match its kind's schema, or a kind this file does not know, is printed as its JSON.
// Everything in a record may come from a model, a command or a file: the text is terminal-safe
// (control characters escaped; a line break only where the rendering puts one).
import type * as Wire from "../core/contracts/types/ledger-records.v1.js";
import type { OperatorAct } from "../core/ports/ledger-store.js";
import { operatorActRef } from "../core/records/operator-act.js";
import { readRecordBody } from "../core/records/record-body.js";
import { isRecordKind } from "../core/records/record-kinds.js";
import { terminalLine, terminalSafe } from "../core/text/terminal-text.js";
import { changesetDiff } from "./changeset-diff.js";
import { actsOnRun, OPERATOR_ACT_KIND } from "./record-view.js";

/** A record as a reader has it: its ref, its kind and its body. */
export interface RecordToRender {
  readonly ref: string;
  readonly kind: string;
  readonly body: unknown;
}

/** What a rendering may add from beside the record. */
export interface RenderContext {
  /** For an execution: the run report stored beside it (each step's excerpt, each check's detail). */
  readonly report?: unknown;
  /** The loop's operator acts: who approved or denied a run's steps, and a denial's reason. */
  readonly acts?: readonly OperatorAct[];
}

type Lines = string[];

const INDENT = "  ";

/**
 * One line of the rendering: a line feed in what it holds is escaped (`\n`), so that no value can
 * start a line of its own (a forged `outcome:` or heading). Blocks (a diff, an excerpt) go through
 * `block`, which indents each of their lines.
 */
function line(lines: Lines, text: string): void {
  lines.push(terminalLine(text));
}

function indent(text: string, by: string): string {
  return text
    .split("\n")
    .map((l) => (l === "" ? l : `${by}${l}`))
    .join("\n");
}

/** `key: value` for the values that are there. */
function fields(lines: Lines, pairs: readonly (readonly [string, unknown])[]): void {
  for (const [k, v] of pairs) {
    if (v === undefined || v === null) continue;
    line(lines, `${INDENT}${k}: ${typeof v === "string" ? v : JSON.stringify(v)}`);
  }
}

/** A block of text (an excerpt, a diff) under a heading, indented; nothing when empty. */
function block(lines: Lines, heading: string, text: string | undefined, by: string): void {
  if (text === undefined || text === "") return;
  if (!text.replace(/\n$/, "").includes("\n")) {
    line(lines, `${by}${heading}${heading === "" ? "" : " "}${text.replace(/\n$/, "")}`);
    return;
  }
  if (heading !== "") line(lines, `${by}${heading}`);
  lines.push(indent(text.replace(/\n$/, ""), `${by}${INDENT}`));
}

function list(items: readonly string[] | undefined): string {
  return items === undefined || items.length === 0 ? "(none)" : items.join(", ");
}

// ---- messages ---------------------------------------------------------------------------------

function planStep(lines: Lines, s: Wire.Proposal["candidate"]["steps"][number], by: string): void {
  const what = [
    s.profile === undefined ? undefined : `profile ${s.profile}`,
    s.read === undefined ? undefined : `read ${s.read.join(", ")}`,
    s.path === undefined ? undefined : s.path,
    s.args === undefined ? undefined : `args ${JSON.stringify(s.args)}`,
  ].filter((x) => x !== undefined);
  line(lines, `${by}- ${s.id}: ${s.action}${what.length === 0 ? "" : ` ${what.join("; ")}`}`);
  block(lines, "diff:", s.diff, `${by}${INDENT}`);
  block(lines, "content:", s.content, `${by}${INDENT}`);
}

function plan(lines: Lines, p: Wire.Proposal["candidate"], by: string): void {
  line(lines, `${by}hypothesis: ${p.hypothesis}`);
  line(lines, `${by}steps:`);
  for (const s of p.steps) planStep(lines, s, `${by}${INDENT}`);
  if (p.expected_checks !== undefined)
    line(lines, `${by}expected checks: ${list(p.expected_checks)}`);
}

function findings(
  lines: Lines,
  fs: readonly Wire.Review["verdict"]["findings"][number][],
  by: string,
) {
  if (fs.length === 0) {
    line(lines, `${by}findings: (none)`);
    return;
  }
  line(lines, `${by}findings:`);
  for (const f of fs) {
    line(lines, `${by}${INDENT}- [${f.severity}] ${f.claim}`);
    for (const e of f.evidence) line(lines, `${by}${INDENT}${INDENT}evidence: ${e}`);
  }
}

/** A typed message (Plan, Verdict, Result, Question, DeadEnd, Finding) as readable lines. */
function message(lines: Lines, m: Wire.TypedMessage, by: string): void {
  switch (m.type) {
    case "Plan":
      plan(lines, m.payload, by);
      return;
    case "Verdict":
      line(lines, `${by}decision: ${m.payload.decision}`);
      findings(lines, m.payload.findings, by);
      return;
    case "Result":
      line(lines, `${by}outcome: ${m.payload.outcome}`);
      block(lines, "summary:", m.payload.summary, by);
      line(lines, `${by}evidence:`);
      for (const e of m.payload.evidence) line(lines, `${by}${INDENT}- ${e}`);
      return;
    case "Question":
      line(lines, `${by}question: ${m.payload.question}`);
      if (m.payload.options !== undefined)
        for (const o of m.payload.options) line(lines, `${by}${INDENT}- ${o}`);
      return;
    case "DeadEnd":
      line(lines, `${by}reason: ${m.payload.reason}`);
      line(lines, `${by}tried:`);
      for (const t of m.payload.tried) line(lines, `${by}${INDENT}- ${t}`);
      return;
    case "Finding":
      findings(lines, [m.payload], by);
      return;
    default:
      line(lines, `${by}${JSON.stringify(m satisfies never)}`);
  }
}

// ---- one renderer per kind ---------------------------------------------------------------------

function proposal(lines: Lines, b: Wire.Proposal): void {
  fields(lines, [
    ["query", b["query/id"]],
    ["agent", b["agent/id"]],
    ["passage", b["passage/ref"]],
    ["created", b["created-at"]],
    ["evidence", list(b.evidence)],
  ]);
  line(lines, `${INDENT}plan:`);
  plan(lines, b.candidate, `${INDENT}${INDENT}`);
}

function review(lines: Lines, b: Wire.Review): void {
  fields(lines, [
    ["query", b["query/id"]],
    ["proposal", b["proposal/ref"]],
    ["agent", b["agent/id"]],
    ["passage", b["passage/ref"]],
    ["created", b["created-at"]],
    ["decision", b.verdict.decision],
  ]);
  findings(lines, b.verdict.findings, INDENT);
}

/** One operator act as one terminal-safe line: `deny fix-slugify by OP at T: reason`. */
export function renderOperatorAct(act: OperatorAct): string {
  const what =
    act.kind === "answer"
      ? `answer to ${act.target}`
      : `${act.kind} ${act.target.slice(act.target.lastIndexOf(" ") + 1)} of ${act.target.slice(0, act.target.lastIndexOf(" "))}`;
  const text = act.text === undefined ? "" : `: ${act.text}`;
  return terminalLine(`${what} by ${act.operator} at ${act.at}${text}`);
}

function execution(lines: Lines, b: Wire.Execution, context: RenderContext): void {
  fields(lines, [
    ["outcome", `${b.outcome}${b["refusal/code"] === undefined ? "" : ` (${b["refusal/code"]})`}`],
    ["query", b["query/id"]],
    ["proposal", b["proposal/ref"]],
    ["review", b["review/ref"]],
    ["admission", b.admission],
    ["approval", b.hil],
    ["environment", b["environment/ref"]],
    ["started", b["started-at"]],
    ["ended", b["ended-at"]],
    ["result digest", b["result/digest"]],
  ]);
  const report = reportOf(context.report, b["execution/ref"]);
  const stepReports = new Map((report?.steps ?? []).map((s) => [s["step/id"], s]));
  const checkReports = new Map((report?.checks ?? []).map((c) => [c.name, c]));
  line(lines, `${INDENT}steps:${b.steps.length === 0 ? " (none ran)" : ""}`);
  for (const s of b.steps) {
    const r = stepReports.get(s["step/id"]);
    if (r !== undefined) {
      stepReport(lines, r);
      continue;
    }
    const exit = s["exit-status"] === null ? "" : ` exit ${s["exit-status"]}`;
    const refusal = s["refusal/code"] === undefined ? "" : ` refused ${s["refusal/code"]}`;
    line(lines, `${INDENT}${INDENT}- ${s["step/id"]} (${s.class})${exit}${refusal}`);
  }
  line(lines, `${INDENT}checks:${b.checks.length === 0 ? " (none ran)" : ""}`);
  for (const c of b.checks) {
    const r = checkReports.get(c["check/id"]);
    if (r !== undefined) {
      checkReport(lines, r);
      continue;
    }
    const exit = c["exit-status"] === null ? "" : ` (exit ${c["exit-status"]})`;
    line(lines, `${INDENT}${INDENT}- ${c["check/id"]}: ${c.passed ? "passed" : "failed"}${exit}`);
  }
  const approvals = b.approvals ?? [];
  const byRef = new Map((context.acts ?? []).map((a) => [operatorActRef(a), a]));
  const decided = actsOnRun(context.acts ?? [], b["proposal/ref"]);
  if (approvals.length > 0 || decided.length > 0) {
    line(lines, `${INDENT}operator acts:`);
    for (const a of approvals) {
      const act = byRef.get(a["act/ref"]);
      line(
        lines,
        `${INDENT}${INDENT}- ${act === undefined ? `approve ${a["step/id"]} (${a["act/ref"]})` : renderOperatorAct(act)}`,
      );
    }
    for (const act of decided)
      if (!approvals.some((a) => byRef.get(a["act/ref"]) === act))
        line(lines, `${INDENT}${INDENT}- ${renderOperatorAct(act)}`);
  }
  if (report === undefined)
    line(lines, `${INDENT}(no run report beside it: step excerpts and check details unknown)`);
}

function reportOf(report: unknown, executionRef: string): Wire.RunReport | undefined {
  if (report === undefined) return undefined;
  const read = readRecordBody("runReport", report);
  return read.ok && read.value["execution/ref"] === executionRef ? read.value : undefined;
}

function stepReport(lines: Lines, s: Wire.StepReport): void {
  const by = `${INDENT}${INDENT}`;
  const exit =
    s["exit/code"] === undefined || s["exit/code"] === null ? "" : ` exit ${s["exit/code"]}`;
  const extra = [
    s["timed-out"] === true ? "timed out" : undefined,
    s.truncated === true ? "output truncated" : undefined,
    s.approval === "approved" ? "approved" : undefined,
    s.refusal === undefined ? undefined : `refused ${s.refusal}`,
  ].filter((x) => x !== undefined);
  line(
    lines,
    `${by}- ${s["step/id"]} (${s.class}, ${s.action}): ${s.status}${exit}${extra.length === 0 ? "" : ` (${extra.join(", ")})`}`,
  );
  block(lines, "excerpt:", s.excerpt, `${by}${INDENT}`);
  problems(lines, s.findings, `${by}${INDENT}`);
}

function checkReport(lines: Lines, c: Wire.CheckReport): void {
  const by = `${INDENT}${INDENT}`;
  const exit =
    c["exit/code"] === undefined || c["exit/code"] === null ? "" : ` (exit ${c["exit/code"]})`;
  line(lines, `${by}- ${c.name}: ${c.passed ? "passed" : "failed"}${exit}`);
  block(lines, "detail:", c.detail, `${by}${INDENT}`);
  problems(lines, c.findings, `${by}${INDENT}`);
}

function problems(lines: Lines, ps: readonly Wire.Problem[] | undefined, by: string): void {
  if (ps === undefined || ps.length === 0) return;
  line(lines, `${by}findings:`);
  for (const p of ps) line(lines, `${by}${INDENT}- ${p.code} ${p.path || "(root)"}: ${p.message}`);
}

function runReport(lines: Lines, b: Wire.RunReport): void {
  fields(lines, [
    ["outcome", `${b.outcome}${b["refusal/code"] === undefined ? "" : ` (${b["refusal/code"]})`}`],
    ["query", b["query/id"]],
    ["proposal", b["proposal/ref"]],
    ["execution", b["execution/ref"]],
    ["environment", b["environment/ref"]],
    ["environment destroyed", b["environment/destroyed"] ? "yes" : "NOT confirmed"],
  ]);
  line(lines, `${INDENT}steps:${b.steps.length === 0 ? " (none ran)" : ""}`);
  for (const s of b.steps) stepReport(lines, s);
  line(lines, `${INDENT}checks:${b.checks.length === 0 ? " (none ran)" : ""}`);
  for (const c of b.checks) checkReport(lines, c);
}

/** At most this many characters of a tool result are shown (the record has them all). */
const TOOL_RESULT_CHARS = 2000;

function clip(text: string, max: number): string {
  return text.length <= max
    ? text
    : `${text.slice(0, max)}… (${text.length - max} more characters)`;
}

function obj(v: unknown): Readonly<Record<string, unknown>> | undefined {
  return typeof v === "object" && v !== null && !Array.isArray(v)
    ? (v as Record<string, unknown>)
    : undefined;
}

/** The turn of a model call: its kind, summary, message and tool calls. */
function turn(lines: Lines, t: unknown, by: string): void {
  const o = obj(t);
  if (o === undefined) {
    if (t !== undefined) block(lines, "answer:", typeof t === "string" ? t : JSON.stringify(t), by);
    return;
  }
  if (typeof o.summary === "string") line(lines, `${by}summary: ${o.summary}`);
  const m = obj(o.message);
  if (m !== undefined) {
    line(lines, `${by}message: ${String(m.type)}`);
    const payload = typeof m.payload_json === "string" ? parse(m.payload_json) : m.payload;
    const typed = { type: m.type, payload } as Wire.TypedMessage;
    if (obj(payload) !== undefined) {
      try {
        message(lines, typed, `${by}${INDENT}`);
      } catch {
        line(lines, `${by}${INDENT}${JSON.stringify(payload)}`);
      }
    } else if (typeof m.payload_json === "string") line(lines, `${by}${INDENT}${m.payload_json}`);
  }
}

function parse(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

function transcriptEntry(
  lines: Lines,
  e: Readonly<Record<string, unknown>>,
  /** Whether another model call follows this one in the passage (an invalid answer's repair). */
  answered: boolean,
): void {
  const at = `${INDENT}${INDENT}`;
  const by = `${at}${INDENT}`;
  switch (e.kind) {
    case "model-call": {
      const v = obj(e.validation);
      const stop = e.stop === "complete" || e.stop === undefined ? "" : ` (${String(e.stop)})`;
      const valid = v === undefined ? "" : v.valid === true ? "" : " — invalid";
      line(lines, `${at}call ${String(e.index)}${stop}${valid}`);
      if (typeof e.refusal === "string") line(lines, `${by}refusal: ${e.refusal}`);
      turn(lines, e.turn ?? e.candidate, by);
      const errors = Array.isArray(v?.errors) ? (v.errors as unknown[]) : [];
      for (const p of errors) {
        const q = obj(p);
        line(
          lines,
          `${by}problem: ${String(q?.code)} ${String(q?.path || "(root)")}: ${String(q?.message)}`,
        );
      }
      if (v !== undefined && v.valid !== true)
        line(lines, answered ? `${by}→ repair asked` : `${by}→ no repair left: the passage ended`);
      return;
    }
    case "model-error":
      line(
        lines,
        `${INDENT}call ${String(e.index)} failed: ${String(e.code)}: ${String(e.message)}`,
      );
      return;
    case "tool-call": {
      const r = obj(e.result);
      const status = r?.ok === false || r?.isError === true ? "error" : "ok";
      line(lines, `${by}tool ${String(e.name)} ${JSON.stringify(e.args ?? {})} → ${status}`);
      const content = r?.content ?? r?.error ?? r?.message;
      if (content !== undefined)
        block(
          lines,
          "",
          clip(typeof content === "string" ? content : JSON.stringify(content), TOOL_RESULT_CHARS),
          `${by}${INDENT}`,
        );
      return;
    }
    default:
      line(lines, `${at}${JSON.stringify(e)}`);
  }
}

function transcript(lines: Lines, b: Wire.Transcript): void {
  const u = b.usage;
  fields(lines, [
    ["role", b.role],
    ["agent", b["agent/id"]],
    ["passage", b["passage/ref"]],
    ["provider", b.provider],
    ["outcome", b.outcome.ok ? b.outcome.type : `failed ${b.outcome.code}: ${b.outcome.message}`],
    [
      "usage",
      `${u.modelCalls} model calls, ${u.toolCalls} tool calls, ${u.repairs} repairs; tokens ${u.inputTokens} in (${u.cachedInputTokens} cached), ${u.outputTokens} out (${u.reasoningTokens} reasoning); ${Math.round(u.latencyMs)} ms`,
    ],
    ["evidence", b.evidenceRefs === undefined ? undefined : list(b.evidenceRefs)],
  ]);
  line(lines, `${INDENT}turns:`);
  // The tool calls of a model call follow it; each model call starts a turn. A repair was sent
  // after an invalid answer when another call followed it, answered or failed.
  const lastCall = b.entries.findLastIndex((x) => {
    const kind = obj(x)?.kind;
    return kind === "model-call" || kind === "model-error";
  });
  b.entries.forEach((entry, i) => {
    const e = obj(entry);
    if (e === undefined) return;
    if (e.kind === "model-call" && e.index !== 0) lines.push("");
    transcriptEntry(lines, e, i < lastCall);
  });
}

function passageEnd(lines: Lines, b: Wire.PassageEnd): void {
  fields(lines, [
    ["role", b.role],
    ["agent", b["agent/id"]],
    ["passage", b["passage/ref"]],
    ["parent", b["parent/ref"]],
    ["subject", b.subject],
    ["model override", b["model/override"]],
    ["model calls", b["model/calls"]],
    ["transcript", b["transcript/ref"]],
    ["ended", b["ended-at"]],
  ]);
  if (b.failure !== undefined)
    line(lines, `${INDENT}failed: ${b.failure.code}: ${b.failure.message}`);
  if (b.message !== undefined) {
    line(lines, `${INDENT}${b.message.type}:`);
    message(lines, b.message, `${INDENT}${INDENT}`);
  }
  problems(lines, b["plan/problems"], INDENT);
}

function binding(lines: Lines, b: Wire.Binding): void {
  fields(lines, [
    ["query", b["query/id"]],
    ["binding", b["binding/ref"]],
    ["task pack", b["task-pack/file"]],
    ["task pack digest", b["task-pack/digest"]],
    ["memory namespace", b["memory/namespace"]],
    ["created", b["created-at"]],
  ]);
  line(lines, `${INDENT}models:`);
  for (const [role, uri] of Object.entries(b.models)) {
    const override = b["model/override"]?.[role] === undefined ? "" : " (override)";
    line(lines, `${INDENT}${INDENT}${role}: ${uri}${override}`);
  }
}

function memoryWrite(lines: Lines, b: Wire.MemoryWrite): void {
  fields(lines, [
    [
      "memory",
      `${b.memory.path} (${b.memory.scope}${b.memory.namespace === "" ? "" : `, ${b.memory.namespace}`})`,
    ],
    ["agent", b["agent/id"]],
    ["passage", b["passage/ref"]],
    ["write", `#${b.ordinal}, version ${b.version}`],
    ["before", b["before/digest"] ?? "(none)"],
    ["after", `${b["after/digest"]} (${b["after/bytes"]} bytes)`],
    ["written", b["written-at"]],
  ]);
}

/**
 * A changeset: each file with its status, then the change as a git-style diff (a changeset kept
 * without its contents has none; the contents as stored are in its body, `--json`).
 */
function changeset(lines: Lines, b: Wire.Changeset): void {
  fields(lines, [
    ["query", b["query/id"]],
    ["proposal", b["proposal/ref"]],
    ["execution", b["execution/ref"]],
    ["environment", b["environment/ref"]],
    ["baseline", b.baseline],
    ["complete", b.complete ? "yes" : "no (listed, not applicable)"],
  ]);
  line(lines, `${INDENT}files:${b.files.length === 0 ? " (none)" : ""}`);
  for (const f of b.files) {
    const mode = f.mode === undefined ? "" : ` (mode ${f.mode.toString(8)})`;
    line(lines, `${INDENT}${INDENT}- ${f.status} ${f.path}${mode}`);
  }
  if (b.skipped !== undefined && b.skipped.length > 0) {
    line(lines, `${INDENT}skipped:`);
    for (const p of b.skipped)
      line(lines, `${INDENT}${INDENT}- ${p.code} ${p.path || "(root)"}: ${p.message}`);
  }
  block(lines, "diff:", changesetDiff(b), INDENT);
}

/** A record's fields as `key: value` lines, its signature's key last. */
function plain(lines: Lines, body: Readonly<Record<string, unknown>>): void {
  for (const [k, v] of Object.entries(body)) {
    if (k === "signature") continue;
    line(lines, `${INDENT}${k}: ${typeof v === "string" ? v : JSON.stringify(v)}`);
  }
}

function signature(lines: Lines, body: unknown): void {
  const s = obj(obj(body)?.signature);
  if (s !== undefined)
    line(lines, `${INDENT}signed: ${String(s.alg)} by ${String(s["key/public"])}`);
}

/**
 * A record as readable text for a terminal: a heading (`KIND REF`), then its fields, and per kind
 * what a reader wants: a plan with its steps and diffs, a review with its findings, an execution or
 * run report with each step's excerpt and each check's detail, a transcript turn by turn with its
 * tool calls and repairs, a passage's end with its message (the Result, a Question…), a changeset
 * with each file's status and path and the change as a diff.
 *
 * The text is terminal-safe: every control character from the record (ESC, CR, C1, DEL…) is written
 * as a visible escape (`\x1b`, `\r`, `\x9b`), and a line feed stands only where the rendering puts
 * one (between fields, and between the lines of a block such as a diff or an excerpt, each
 * indented); a line feed inside a one-line value is written `\n`. Print it as it is; for the
 * record's exact bytes read its body (`warrant record REF --json`).
 */
export function renderRecord(record: RecordToRender, context: RenderContext = {}): string {
  return terminalSafe(renderLines(record, context).join("\n"));
}

function renderLines(record: RecordToRender, context: RenderContext): Lines {
  const lines: Lines = [`${record.kind} ${record.ref}`];
  const kind = record.kind;
  const read = isRecordKind(kind) ? readRecordBody(kind, record.body) : undefined;
  if (read !== undefined && !read.ok) {
    line(lines, `${INDENT}(the body does not match its schema: ${read.errors[0]?.message ?? ""})`);
    lines.push(indent(JSON.stringify(record.body, null, 2), INDENT));
    return lines;
  }
  const body = read?.value;
  switch (kind) {
    case "proposal":
      proposal(lines, body as Wire.Proposal);
      break;
    case "review":
      review(lines, body as Wire.Review);
      break;
    case "execution":
      execution(lines, body as Wire.Execution, context);
      break;
    case "runReport":
      runReport(lines, body as Wire.RunReport);
      break;
    case "transcript":
      transcript(lines, body as Wire.Transcript);
      break;
    case "passageEnd":
      passageEnd(lines, body as Wire.PassageEnd);
      break;
    case "binding":
      binding(lines, body as Wire.Binding);
      break;
    case "memoryWrite":
      memoryWrite(lines, body as Wire.MemoryWrite);
      break;
    case "changeset":
      changeset(lines, body as Wire.Changeset);
      break;
    case OPERATOR_ACT_KIND:
      line(lines, `${INDENT}${renderOperatorAct(record.body as OperatorAct)}`);
      break;
    default: {
      const o = obj(record.body);
      if (o === undefined) lines.push(indent(JSON.stringify(record.body, null, 2), INDENT));
      else plain(lines, o);
    }
  }
  signature(lines, record.body);
  return lines;
}
