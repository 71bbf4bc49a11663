// The live view of a running loop: one line per fact, note and wait; on a terminal, a status line
// under them with a bar per budget (spent / max), the deadline counting down and what the loop
// waits for. When stdout is not a terminal, plain lines only (and a budget line after each fact).
import type { LoopDocument } from "../core/loop/types.js";
import type { Clock } from "../core/ports.js";
import type { RuntimeEvent } from "./ports.js";

export interface LiveView {
  emit(event: RuntimeEvent): void;
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

export function createLiveView(
  write: (text: string) => void,
  opts: { tty: boolean; clock: Clock },
): LiveView {
  let doc: LoopDocument | undefined;
  let waiting: string | undefined;
  let statusShown = false;
  const status = (): string =>
    doc === undefined
      ? ""
      : `${budgets(doc, true)}  ${countdown(doc.deadline, opts.clock.now())}${waiting === undefined ? "" : `  waiting: ${waiting.split("\n")[0]}`}`;
  const clearStatus = () => {
    if (opts.tty && statusShown) write("\r\x1b[2K");
    statusShown = false;
  };
  const drawStatus = () => {
    if (!opts.tty || doc === undefined) return;
    write(`\r\x1b[2K${status()}`);
    statusShown = true;
  };
  const line = (text: string) => {
    clearStatus();
    write(`${text}\n`);
    drawStatus();
  };
  const timer = opts.tty ? setInterval(drawStatus, 1000) : undefined;
  timer?.unref();
  return {
    emit(event) {
      switch (event.kind) {
        case "fact": {
          doc = event.document;
          waiting = undefined;
          const last = doc.facts.at(-1);
          line(`fact ${String(last?.sequence ?? "?")} ${event.summary}`);
          if (!opts.tty)
            line(`  budgets: ${budgets(doc, false)}; ${countdown(doc.deadline, opts.clock.now())}`);
          break;
        }
        case "note":
          line(event.text);
          break;
        case "waiting":
          if (event.document !== undefined) doc = event.document;
          waiting = event.what;
          line(`waiting: ${event.what}`);
          break;
        case "refused":
          line(`refused: ${event.code}: ${event.message}`);
          break;
        default:
          event satisfies never;
      }
    },
    close() {
      if (timer !== undefined) clearInterval(timer);
      clearStatus();
    },
  };
}
