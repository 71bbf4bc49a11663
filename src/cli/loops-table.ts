// `warrant loops` as text: a header row and one aligned row per loop (query, state, status, what it
// waits for, who holds its lease), or one line saying the store holds no loop.
import { terminalLine } from "../library/basics.js";
import type { LoopListing } from "../library/create-warrant.js";
import type { Waiting } from "../library/pending.js";

const HEADER = ["QUERY", "STATE", "STATUS", "WAITING", "HELD BY"] as const;

/** What a loop waits for, in a few words (`—` when nothing). */
export function waitingCell(w: Waiting | undefined): string {
  if (w === undefined) return "—";
  switch (w.reason) {
    case "approval":
      return `approval of ${w.kind === "admission" ? "admission" : w.step}`;
    case "answer":
      return "answer";
    case "budget":
      return `budget ${w.counter}`;
    case "deadline":
      return "deadline";
    case "model":
    case "tool":
    case "definition":
      return `${w.reason} (${w.role}: ${w.code})`;
    default:
      return w satisfies never;
  }
}

/** What a loop waits for, whole: the cell, and a failed passage's message after it. */
export function waitingLine(w: Waiting): string {
  const cell = waitingCell(w);
  return "message" in w ? `${cell}: ${w.message}` : cell;
}

function row(r: LoopListing): readonly string[] {
  return [
    r.query,
    r.stop === undefined ? r.state : `${r.state} (${r.stop.reason})`,
    r.status,
    waitingCell(r.waiting),
    r.heldBy === undefined ? "—" : `${r.heldBy} until ${r.leaseUntil ?? "?"}`,
  ];
}

/** The lines `warrant loops` prints for `rows` of the store `uri`. */
export function loopsTable(rows: readonly LoopListing[], uri: string): string[] {
  if (rows.length === 0) return [`no loops in ${uri}`];
  // Cells escaped before they are measured, so a control character in a name keeps the columns.
  const cells = [HEADER, ...rows.map((r) => row(r).map((c) => terminalLine(c)))];
  const widths = HEADER.map((_, i) => Math.max(...cells.map((c) => (c[i] ?? "").length)));
  return cells.map((c) =>
    c
      .map((text, i) => (i === c.length - 1 ? text : text.padEnd(widths[i] ?? 0)))
      .join("  ")
      .trimEnd(),
  );
}
