// Small DOM helpers and the rendering of ledger records (plans with diffs, reviews with findings,
// run reports with excerpts and check details, transcripts turn by turn). Text is always set as
// text, never as HTML: records carry model output.
import type { RecordViewAnswer } from "../src/server/api.js";

type Child = Node | string | undefined | null | false;

export function h(
  tag: string,
  attrs: Record<string, string | undefined> = {},
  ...children: Child[]
): HTMLElement {
  const el = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) if (v !== undefined) el.setAttribute(k, v);
  for (const c of children) {
    if (c === undefined || c === null || c === false) continue;
    el.append(typeof c === "string" ? document.createTextNode(c) : c);
  }
  return el;
}

type Json = Record<string, unknown>;

const isObj = (v: unknown): v is Json => typeof v === "object" && v !== null && !Array.isArray(v);
const str = (v: unknown): string =>
  typeof v === "string" ? v : v === undefined ? "" : JSON.stringify(v);
const arr = (v: unknown): unknown[] => (Array.isArray(v) ? v : []);

/** A unified diff with added, removed and hunk lines marked. */
export function diffView(text: string): HTMLElement {
  const pre = h("pre", { class: "diff" });
  for (const line of text.split("\n")) {
    const cls =
      line.startsWith("+++") || line.startsWith("---")
        ? undefined
        : line.startsWith("+")
          ? "add"
          : line.startsWith("-")
            ? "del"
            : line.startsWith("@@")
              ? "hunk"
              : undefined;
    pre.append(h("span", { class: cls }, line), "\n");
  }
  return pre;
}

/**
 * Whether a diff carries its own file headers (`diff --git`, `---`/`+++`) before its first hunk:
 * then none are added, so no header is shown twice.
 */
export function hasHeaders(diff: string): boolean {
  for (const line of diff.split("\n")) {
    if (line.startsWith("@@")) return false;
    if (line.startsWith("diff --git ") || line.startsWith("--- ") || line.startsWith("+++ "))
      return true;
  }
  return false;
}

/** A plan step's change: its diff, or the content it writes as an all-added diff. */
export function stepChange(step: Json): HTMLElement | undefined {
  const path = str(step.path);
  if (typeof step.diff === "string") {
    const d = hasHeaders(step.diff) ? step.diff : `--- a/${path}\n+++ b/${path}\n${step.diff}`;
    return diffView(d);
  }
  if (typeof step.content === "string")
    return diffView(
      `+++ b/${path} (whole file)\n${step.content
        .split("\n")
        .map((l) => `+${l}`)
        .join("\n")}`,
    );
  return undefined;
}

function stepLine(step: Json): string {
  const action = str(step.action);
  if (action === "patch") return `${str(step.id)}: patch ${str(step.path)}`;
  if (action === "observe" && step.read !== undefined)
    return `${str(step.id)}: read ${arr(step.read).map(str).join(", ")}`;
  return `${str(step.id)}: ${action} ${str(step.profile)}${step.args === undefined ? "" : ` ${JSON.stringify(step.args)}`}`;
}

export function planView(candidate: unknown): HTMLElement {
  const c = isObj(candidate) ? candidate : {};
  const box = h("div", {}, h("p", {}, h("strong", {}, "Hypothesis: "), str(c.hypothesis)));
  for (const s of arr(c.steps)) {
    if (!isObj(s)) continue;
    box.append(h("div", { class: "mono" }, stepLine(s)));
    const change = stepChange(s);
    if (change !== undefined) box.append(change);
  }
  const expected = arr(c.expected_checks);
  if (expected.length > 0)
    box.append(h("p", { class: "muted" }, `expects: ${expected.map(str).join(", ")}`));
  return box;
}

export function verdictView(verdict: unknown): HTMLElement {
  const v = isObj(verdict) ? verdict : {};
  const box = h("div", {}, h("p", {}, h("strong", {}, "Reviewer: "), str(v.decision)));
  for (const f of arr(v.findings)) {
    if (!isObj(f)) continue;
    const sev = str(f.severity);
    box.append(
      h(
        "div",
        { class: "finding" },
        h("span", { class: `sev ${sev}` }, sev),
        " ",
        str(f.claim),
        arr(f.evidence).length > 0
          ? h("span", { class: "muted" }, ` (${arr(f.evidence).map(str).join("; ")})`)
          : undefined,
      ),
    );
  }
  return box;
}

const firstLine = (v: unknown): string => str(v).split("\n")[0] ?? "";

function checksView(checks: unknown): HTMLElement {
  const box = h("div", {});
  for (const c of arr(checks)) {
    if (!isObj(c)) continue;
    box.append(
      h(
        "div",
        {
          class: `check ${c.passed === true ? "passed" : "failed"}`,
          "data-testid": "check",
          "data-check": str(c.name ?? c["check/id"]),
        },
        // A run report names its checks `name`, an execution record `check/id`.
        str(c.name ?? c["check/id"]),
        c.detail === undefined
          ? undefined
          : h("span", { class: "muted" }, ` — ${firstLine(c.detail)}`),
      ),
    );
    // A failed command's output tail, below its first line.
    const rest = str(c.detail).split("\n").slice(1).join("\n");
    if (rest !== "") box.append(h("pre", { "data-testid": "check-detail" }, rest));
  }
  return box;
}

/**
 * A run report: its outcome, each step with why it failed (`reasons`, by step id, which the server
 * gives beside the report) or its excerpt, and its checks.
 */
function runView(body: Json, reasons: Readonly<Record<string, string>> = {}): HTMLElement {
  const box = h("div", {});
  if (body.outcome !== undefined)
    box.append(
      h(
        "p",
        {},
        h("strong", {}, "Outcome: "),
        str(body.outcome),
        body["refusal/code"] === undefined ? undefined : ` (${str(body["refusal/code"])})`,
      ),
    );
  for (const s of arr(body.steps)) {
    if (!isObj(s)) continue;
    box.append(
      h(
        "div",
        { class: "mono" },
        `${str(s["step/id"])} ${str(s.action ?? s.class)} ${str(s.status ?? "")}` +
          (s["exit/code"] !== undefined ? ` exit ${str(s["exit/code"])}` : "") +
          (s.approval !== undefined ? ` (${str(s.approval)})` : ""),
      ),
    );
    const reason = reasons[str(s["step/id"])];
    if (reason !== undefined)
      box.append(h("pre", { class: "step-reason", "data-testid": "step-reason" }, reason));
    else if (typeof s.excerpt === "string" && s.excerpt !== "") box.append(h("pre", {}, s.excerpt));
  }
  if (body.checks !== undefined)
    box.append(h("p", {}, h("strong", {}, "Checks")), checksView(body.checks));
  return box;
}

function transcriptView(body: Json): HTMLElement {
  const box = h("div", {});
  for (const e of arr(body.entries)) {
    if (!isObj(e)) continue;
    const turn = isObj(e.turn) ? e.turn : {};
    const t = h(
      "div",
      { class: "turn" },
      h("div", { class: "muted" }, `#${str(e.index)} ${str(e.kind)}`),
    );
    if (turn.summary !== undefined) t.append(h("div", {}, str(turn.summary)));
    for (const call of arr(turn.tool_calls)) {
      if (!isObj(call)) continue;
      t.append(h("div", { class: "mono" }, `→ ${str(call.name)}(${str(call.arguments_json)})`));
    }
    if (isObj(turn.message)) t.append(h("pre", {}, JSON.stringify(turn.message, null, 2)));
    for (const k of ["result", "error", "problems", "repair"])
      if (e[k] !== undefined)
        t.append(
          h("pre", {}, `${k}: ${typeof e[k] === "string" ? e[k] : JSON.stringify(e[k], null, 2)}`),
        );
    box.append(t);
  }
  return box;
}

function messageView(body: Json): HTMLElement {
  const m = isObj(body.message) ? body.message : {};
  const box = h("div", {}, h("p", {}, h("strong", {}, `${str(body.role)}: `), str(m.type)));
  if (m.type === "Plan") box.append(planView(m.payload));
  else box.append(h("pre", {}, JSON.stringify(m.payload ?? body, null, 2)));
  return box;
}

/** One approval or denial: `approve fix of RUN by alice at T: reason`. */
export function actLine(a: Json): string {
  const target = str(a.target);
  const cut = target.lastIndexOf(" ");
  const text = a.text === undefined ? "" : `: ${str(a.text)}`;
  const who = str(a.operator).replace(/^node-operator-binding:/, "");
  return `${str(a.kind)} ${target.slice(cut + 1)} by ${who} at ${str(a.at)}${text}`;
}

/**
 * An execution with what `record` shows beside it: each step and check by name, with the details
 * of the run report kept beside it, and who approved or denied its steps.
 */
function executionView(body: Json, view: Partial<RecordViewAnswer>): HTMLElement {
  const report = isObj(view.report) && isObj(view.report.body) ? view.report.body : undefined;
  const box = runView(
    report === undefined ? body : { ...report, outcome: body.outcome },
    view.stepReasons,
  );
  const acts = arr(view.acts).filter(isObj);
  if (acts.length > 0) {
    box.append(h("p", {}, h("strong", {}, "Operator acts")));
    for (const a of acts) box.append(h("div", { "data-testid": "execution-act" }, actLine(a)));
  }
  return box;
}

/** A changeset: its diff when its contents were kept, and each file with its status. */
function changesetView(body: Json, view: Partial<RecordViewAnswer>): HTMLElement {
  const box = h("div", {});
  if (typeof view.diff === "string" && view.diff !== "")
    box.append(h("div", { "data-testid": "changeset-diff" }, diffView(view.diff)));
  else
    box.append(
      h(
        "p",
        { class: "muted" },
        "kept without its contents (too large, or not only regular files)",
      ),
    );
  for (const f of arr(body.files))
    if (isObj(f)) box.append(h("div", { class: "mono" }, `${str(f.status)} ${str(f.path)}`));
  return box;
}

/** The kinds whose view needs what is stored beside the record (`GET /api/records/REF/view`). */
export const VIEWED_KINDS: ReadonlySet<string> = new Set(["execution", "changeset", "runReport"]);

/**
 * A record's body, rendered by its kind (JSON for kinds without a view of their own); `view` is
 * what `/api/records/REF/view` answers, for the kinds of VIEWED_KINDS.
 */
export function recordView(
  kind: string,
  body: unknown,
  view?: Partial<RecordViewAnswer>,
): HTMLElement {
  const b = isObj(body) ? body : {};
  const v = view ?? {};
  switch (kind) {
    case "proposal":
      return planView(b.candidate);
    case "review":
      return verdictView(b.verdict);
    case "runReport":
      return runView(b, v.stepReasons);
    case "execution":
      return executionView(b, v);
    case "changeset":
      return changesetView(b, v);
    case "transcript":
      return transcriptView(b);
    case "passageEnd":
      return messageView(b);
    default:
      return h("pre", {}, JSON.stringify(body, null, 2));
  }
}
