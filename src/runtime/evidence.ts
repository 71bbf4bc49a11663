// The evidence a passage sees, fixed from the ledger before its first model call: the task, the
// task pack's commands and policies, and every earlier proposal, review, plan refusal, run and
// operator answer. The same ledger always gives the same text, so a redone passage sees what the
// crashed one saw. The runtime's own lines state only what the role is asked for; what a good
// answer looks like for this task comes from the pack's `guidance` (and the agent's own prompt).

import { type CycleView, critique, type LedgerView } from "../core/loop/next-action.js";
import type { Role } from "../core/loop/types.js";
import { canonicalJson } from "../core/records/canonical.js";
import type { TaskPack, VerifierCheck } from "../core/taskpack/task-pack.js";

function packSection(pack: TaskPack): string {
  const commands = [...pack.commands.values()].map(
    (p) =>
      `- ${p.name} (${p.effect}): argv ${JSON.stringify(p.argv)}, args schema ${canonicalJson(p.argsSchema)}`,
  );
  const checks = pack.verifier.checks.map((c) => `- ${c.name}: ${describeCheck(c)}`);
  return [
    `Task: ${pack.task}`,
    "",
    "Command profiles:",
    ...commands,
    "",
    `Patch policy: files matching ${pack.patchPolicy.allow.map((g) => g.source).join(", ")}; at most ${pack.patchPolicy.maxBytes} bytes.`,
    "Verifier checks (all must pass):",
    ...checks,
  ].join("\n");
}

function describeCheck(c: VerifierCheck): string {
  switch (c.kind) {
    case "command":
      return `command ${c.command} exits 0`;
    case "unchanged":
      return `files matching ${c.globs.map((g) => g.source).join(", ")} stay byte-identical`;
    case "only-allowed-changed":
      return "only files the patch policy allows change";
    default:
      return c satisfies never;
  }
}

function cycleSection(view: LedgerView, cycle: CycleView, index: number): string {
  const lines = [`Cycle ${index + 1}: proposal ${cycle.proposalRef}`];
  if (cycle.proposal !== undefined)
    lines.push(`  plan: ${canonicalJson(cycle.proposal.candidate)}`);
  for (const r of cycle.reviews) {
    lines.push(`  review: ${r.verdict.decision}`);
    for (const f of r.verdict.findings) lines.push(`    - [${f.severity}] ${f.claim}`);
  }
  const critic = critique(view, cycle)?.message;
  if (critic !== undefined)
    lines.push(`  critic (${critic.type}): ${canonicalJson(critic.payload)}`);
  const ex = cycle.execution?.body;
  if (ex !== undefined) {
    lines.push(
      `  run: ${ex.outcome}${ex["refusal/code"] === undefined ? "" : ` (${ex["refusal/code"]})`}`,
    );
    for (const s of ex.steps) {
      lines.push(
        `    step ${s["step/id"]} ${s.action}: ${s.status} exit ${String(s["exit/code"] ?? "-")}`,
      );
      if (s.excerpt !== undefined && s.excerpt !== "") lines.push(indent(s.excerpt, 6));
    }
    for (const c of ex.checks)
      lines.push(`    check ${c.name}: ${c.passed ? "passed" : "failed"} — ${c.detail}`);
  }
  return lines.join("\n");
}

function indent(text: string, n: number): string {
  const pad = " ".repeat(n);
  return text
    .split("\n")
    .map((l) => pad + l)
    .join("\n");
}

function historySection(view: LedgerView): string {
  const lines: string[] = [];
  view.cycles.forEach((c, i) => {
    lines.push(cycleSection(view, c, i));
  });
  for (const p of view.passages) {
    const problems = p.end?.["plan/problems"];
    if (problems !== undefined && problems.length > 0) {
      lines.push(`A plan was refused by the host (${p.ref}):`);
      for (const e of problems) lines.push(`  - ${e.code} at ${e.path || "(root)"}: ${e.message}`);
    }
    if (p.end?.failure !== undefined) lines.push(`Passage ${p.ref} failed: ${p.end.failure.code}`);
    const msg = p.end?.message;
    if (msg?.type === "Question" || msg?.type === "DeadEnd") {
      lines.push(`The implementer said (${msg.type}): ${canonicalJson(msg.payload)}`);
      for (const a of view.acts) {
        if (a.kind === "answer" && a.target === p.ref)
          lines.push(`The operator answered: ${a.text ?? ""}`);
      }
    }
  }
  return lines.length === 0 ? "History: none yet." : ["History:", ...lines].join("\n");
}

/** The pack's guidance for the role, when it gives some: the last thing the role reads. */
function guidanceSection(pack: TaskPack, role: Role): string[] {
  const text = pack.guidance[role];
  return text === undefined ? [] : ["", `Guidance for the ${role}:`, text];
}

export function implementerEvidence(pack: TaskPack, view: LedgerView): string {
  return [
    packSection(pack),
    "",
    historySection(view),
    "",
    "Propose the next experiment as a Plan: its first step must be an observation; patches stay inside the patch policy.",
    ...guidanceSection(pack, "implementer"),
  ].join("\n");
}

export function reviewerEvidence(pack: TaskPack, view: LedgerView, cycle: CycleView): string {
  return [
    packSection(pack),
    "",
    historySection(view),
    "",
    `Review proposal ${cycle.proposalRef}:`,
    canonicalJson(cycle.proposal?.candidate ?? null),
    "",
    "Answer with a Verdict.",
    ...guidanceSection(pack, "reviewer"),
  ].join("\n");
}

export function criticEvidence(pack: TaskPack, view: LedgerView, cycle: CycleView): string {
  return [
    packSection(pack),
    "",
    historySection(view),
    "",
    `The reviewer accepted proposal ${cycle.proposalRef}:`,
    canonicalJson(cycle.proposal?.candidate ?? null),
    "",
    "Look for what could go wrong if it runs. Answer with a Finding (high or critical stops it).",
    ...guidanceSection(pack, "adversarial-critic"),
  ].join("\n");
}

export function summarizerEvidence(pack: TaskPack, view: LedgerView, cycle: CycleView): string {
  return [
    packSection(pack),
    "",
    historySection(view),
    "",
    `The verifier's verdict on the run of ${cycle.proposalRef} is known. Write the Result.`,
    ...guidanceSection(pack, "summarizer"),
  ].join("\n");
}
