// The live view of a running loop, a subscriber of the event stream: one line per fact, passage,
// step, check and wait; on a terminal, a status line under them with a bar per budget (spent / max),
// the deadline counting down and what the loop waits for. When stdout is not a terminal, plain
// lines only (and a budget line after each fact). Every line is terminal-safe: what came from a
// model, a command or a file has its control characters escaped, and a line breaks only where the
// view breaks it.
import type { Clock, EgressConnection, LoopDocument, WarrantEvent } from "../index.js";
import { terminalLine, terminalSafe } from "../library/basics.js";
import type { TokenUsage } from "../library/loop-usage.js";

export interface LiveView {
  emit(event: WarrantEvent): void;
  /**
   * Take the status line off the terminal and stop redrawing it until the next event, so that a
   * prompt written on the terminal meanwhile stays visible; the wait it showed is the prompt's now.
   */
  hold(): void;
  close(): void;
}

const BAR = 10;

function bar(spent: number, max: number): string {
  const filled = Math.min(BAR, Math.round((spent / Math.max(1, max)) * BAR));
  return `${"█".repeat(filled)}${"░".repeat(BAR - filled)}`;
}

export function budgets(doc: LoopDocument, withBars: boolean): string {
  const rows: [string, number, number][] = [
    ["passages", doc.spent.passages, doc.limits["max/passages"]],
    ["solver", doc.spent["solver-passages"], doc.limits["max/solver-passages"]],
    ["reviewer", doc.spent["reviewer-passages"], doc.limits["max/reviewer-passages"]],
    ["cycles", doc.spent.cycles, doc.limits["max/cycles"]],
    ["runs", doc.spent.runs, doc.limits["max/experiments"]],
  ];
  return rows
    .map(([n, s, m]) => (withBars ? `${n} ${bar(s, m)} ${s}/${m}` : `${n} ${s}/${m}`))
    .join("  ");
}

function countdown(deadline: string, now: Date): string {
  const ms = Date.parse(deadline) - now.getTime();
  if (ms <= 0) return "deadline passed";
  const s = Math.floor(ms / 1000);
  return `deadline in ${Math.floor(s / 60)}m${String(s % 60).padStart(2, "0")}s`;
}

/**
 * Cut a status line to fit one terminal row: a line that wraps could not be erased in place. Every
 * character the view draws is one column wide. A terminal that reports no width (a pseudo-terminal
 * whose size was never set says 0 columns) is taken as 80 columns wide.
 */
export function fitStatus(text: string, columns: number | undefined): string {
  const width = Math.max(10, (columns === undefined || columns <= 0 ? 80 : columns) - 1);
  const chars = Array.from(text);
  return chars.length <= width ? text : `${chars.slice(0, width - 1).join("")}…`;
}

/** Model calls and the providers' token counts, as one phrase: `2 model calls; tokens 900 in, 80 out`. */
export function tokensPhrase(u: TokenUsage): string {
  const calls = `${u.modelCalls} model call${u.modelCalls === 1 ? "" : "s"}`;
  const cached = u.cachedInputTokens > 0 ? ` (${u.cachedInputTokens} cached)` : "";
  const reasoning = u.reasoningTokens > 0 ? ` (${u.reasoningTokens} reasoning)` : "";
  return `${calls}; tokens ${u.inputTokens} in${cached}, ${u.outputTokens} out${reasoning}`;
}

/** A passage's model calls and tokens after its end line, when the event carries them. */
function passageTokens(usage: TokenUsage | undefined): string {
  return usage === undefined ? "" : ` (${tokensPhrase(usage)})`;
}

/** What the lines say beyond the event itself. */
export interface LineOptions {
  /** Why a mutation is approved without asking, when it is (default `--yes`). */
  readonly autoApproval?: string;
  /**
   * The store lives in this process (`memory:`): no other terminal can approve, deny or answer, so
   * the view says so instead of printing commands that could not work.
   */
  readonly processStore?: boolean;
}

/**
 * One egress connection as one terminal-safe line: target, address, decision or failure, bytes
 * each way (the host is the command's own choice: any bytes).
 */
export function connectionLine(c: EgressConnection): string {
  return terminalLine(rawConnectionLine(c));
}

function rawConnectionLine(c: EgressConnection): string {
  const target = `${c.host.includes(":") ? `[${c.host}]` : c.host}:${c.port}`;
  const via = c.address === undefined || c.address === c.host ? "" : ` (${c.address})`;
  if (!c.allowed) return `net ${c.protocol} ${target} refused: ${c.reason ?? "egress/not-listed"}`;
  if (c.reason !== undefined)
    return `net ${c.protocol} ${target}${via} allowed, failed: ${c.reason}`;
  return `net ${c.protocol} ${target}${via} allowed: ${c["bytes/up"]} B up, ${c["bytes/down"]} B down`;
}

/**
 * The line an event prints, if any (model and tool calls, phases and drive bounds print none):
 * terminal-safe, with control characters escaped and a line feed only where the view puts one
 * (before a connection, a check's detail line, an approval's description).
 */
export function lineOf(e: WarrantEvent, o: LineOptions = {}): string | undefined {
  const text = rawLineOf(e, o);
  return text === undefined ? undefined : terminalSafe(text);
}

/** Text a line holds as one line: a line feed in it is escaped. */
const one = terminalLine;

function rawLineOf(e: WarrantEvent, o: LineOptions): string | undefined {
  switch (e.kind) {
    case "fact":
      return `fact ${e.sequence} ${one(e.summary)}`;
    case "passage-start":
      return `${e.role} passage ${e.passageRef}${e.redone ? " (redone after an interruption)" : ""}`;
    case "passage-end":
      return e.outcome.ok
        ? `  ${e.role} → ${e.outcome.type}${e.outcome.refused === undefined ? "" : ` refused: ${one(e.outcome.refused.join(", "))}`}${passageTokens(e.usage)}`
        : `refused: ${e.outcome.code}: ${e.role} passage failed: ${one(e.outcome.message)}${passageTokens(e.usage)}`;
    case "run-start":
      return `run started in a fresh environment (${e.backend}${e.mode === undefined ? "" : `, ${e.mode}`})`;
    case "step-end": {
      const exit = e.exitCode === undefined ? "" : ` (exit ${String(e.exitCode)})`;
      const net = (e.connections ?? []).map((c) => `\n    ${connectionLine(c)}`).join("");
      const why = e.reason === undefined ? "" : detailLines(e.reason);
      return `  step ${one(e.stepId)} ${e.action}: ${e.status}${exit}${why}${net}`;
    }
    case "check":
      return e.passed
        ? `  check ${one(e.name)}: passed`
        : `  check ${one(e.name)}: failed${detailLines(e.detail)}`;
    case "run-end":
      if (e.interrupted)
        return e.environmentDestroyed
          ? "run interrupted mid-step: concluded unknown, environment destroyed"
          : "run interrupted mid-step: environment destroyed (NOT confirmed): rollback/destroy-unconfirmed";
      if (!e.environmentMade) return undefined;
      return `  environment destroyed${e.environmentDestroyed ? " (confirmed)" : " (NOT confirmed)"}`;
    case "approval-requested":
      return o.processStore === true
        ? `waiting: approval of ${one(e.step)}: the store is memory:, so no other terminal can answer; run with --yes, on a terminal, or on a kept store\n${e.description}`
        : `waiting: approval of ${one(e.step)}: warrant approve ${e.proposalRef} ${one(e.step)} | warrant deny ${e.proposalRef} ${one(e.step)}\n${e.description}`;
    case "approval-answered":
      return e.by === "auto"
        ? `  approved ${one(e.step)} automatically (${o.autoApproval ?? "--yes"})`
        : undefined;
    case "blocked":
      return `waiting: ${e.reason}${e.counter === undefined ? "" : ` (${e.counter})`}: ${one(e.detail)}`;
    case "summary-skipped":
      return `no summary: ${one(e.detail)}`;
    case "lease-lost":
      return `refused: ${e.code}: ${one(e.message)}`;
    case "drive-start":
    case "drive-end":
    case "model-call-start":
    case "model-call-end":
    case "repair":
    case "tool-call-start":
    case "tool-call-end":
    case "run-phase":
    case "step-start":
    case "stop":
      return undefined;
    default:
      return e satisfies never;
  }
}

/** At most this many lines of a failed check's detail are shown live (`warrant record` has all). */
const DETAIL_LINES = 6;

/** A failed check's detail under its line, indented; cut after a few lines. */
function detailLines(detail: string): string {
  const lines = detail.trimEnd().split("\n");
  if (lines.length === 1 && lines[0] === "") return "";
  const shown = lines.slice(0, DETAIL_LINES).map((l) => `\n    ${l}`);
  const more = lines.length - DETAIL_LINES;
  return `${shown.join("")}${more > 0 ? `\n    … ${more} more line${more === 1 ? "" : "s"} (warrant record shows them all)` : ""}`;
}

export function createLiveView(
  write: (text: string) => void,
  opts: {
    tty: boolean;
    clock: Clock;
    columns?: () => number | undefined;
  } & LineOptions,
): LiveView {
  let doc: LoopDocument | undefined;
  let waiting: string | undefined;
  let statusShown = false;
  let held = false;
  const status = (): string =>
    doc === undefined
      ? ""
      : `${countdown(doc.deadline, opts.clock.now())}${waiting === undefined ? "" : `  waiting: ${waiting.split("\n")[0]}`}  ${budgets(doc, true)}`;
  const clearStatus = () => {
    if (opts.tty && statusShown) write("\r\x1b[2K");
    statusShown = false;
  };
  const drawStatus = () => {
    if (!opts.tty || held || doc === undefined) return;
    write(`\r\x1b[2K${fitStatus(status(), opts.columns?.())}`);
    statusShown = true;
  };
  const line = (text: string) => {
    held = false;
    clearStatus();
    write(`${text}\n`);
    drawStatus();
  };
  const timer = opts.tty ? setInterval(drawStatus, 1000) : undefined;
  timer?.unref();
  return {
    emit(event) {
      const text = lineOf(event, opts);
      switch (event.kind) {
        case "fact":
          doc = event.document;
          waiting = undefined;
          break;
        case "blocked":
          doc = event.document;
          waiting = text?.slice("waiting: ".length);
          break;
        case "approval-requested":
          waiting = text?.slice("waiting: ".length);
          break;
        case "approval-answered":
          waiting = undefined;
          break;
        default:
          break;
      }
      if (text !== undefined) line(text);
      if (event.kind === "fact" && !opts.tty)
        line(
          `  budgets: ${budgets(event.document, false)}; ${countdown(event.document.deadline, opts.clock.now())}`,
        );
    },
    hold() {
      clearStatus();
      held = true;
      // The prompt now says what the loop waits for; once it is answered the wait is over.
      waiting = undefined;
    },
    close() {
      if (timer !== undefined) clearInterval(timer);
      clearStatus();
    },
  };
}
