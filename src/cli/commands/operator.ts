// Operator acts from any terminal: `renew`, `cancel` (loop facts) and `approve`, `deny`, `answer`
// (operator acts a waiting run polls for).
import type { Command } from "commander";
import type { LedgerStore } from "../../core/loop/ledger-store.js";
import type { LoopCommand } from "../../core/loop/types.js";
import { ADMISSION_STEP, approvalTarget, readLedger } from "../../runtime/ledger-view.js";
import { LoopLedger } from "../../runtime/loop-ledger.js";
import { EXIT_INVALID, err, out, UsageError } from "../io.js";
import { withStore } from "./inspect.js";
import { operatorBinding } from "./run.js";

function refuse(code: string, message: string): void {
  err(`warrant: ${code}: ${message}`);
  process.exitCode = EXIT_INVALID;
}

async function loopAct(
  store: LedgerStore,
  query: string,
  command: LoopCommand,
  done: string,
): Promise<void> {
  const d = await new LoopLedger(store).execute(query, command, new Date());
  if (d.result === "refused") refuse(d.refusal.code, d.refusal.message);
  else out(d.result === "appended" ? done : `${done} (already recorded: nothing appended)`);
}

/** Approve or deny STEP of RUN (a proposal ref, or `admission` for an operator-admitted run). */
async function decide(
  store: LedgerStore,
  run: string,
  step: string,
  kind: "approve" | "deny",
): Promise<void> {
  const proposal = await store.readRecord(run);
  if (proposal === undefined || proposal.kind !== "proposal") {
    refuse("loop/run-missing", `no run ${run} in ${store.uri}`);
    return;
  }
  const steps = (
    (proposal.body as { candidate?: { steps?: { id?: unknown }[] } }).candidate?.steps ?? []
  ).map((s) => s.id);
  if (step !== ADMISSION_STEP && !steps.includes(step)) {
    refuse("loop/run-missing", `run ${run} has no step ${step} (steps: ${steps.join(", ")})`);
    return;
  }
  await store.postOperatorAct({
    query: proposal.query,
    kind,
    target: approvalTarget(run, step),
    operator: operatorBinding(),
    at: new Date().toISOString(),
  });
  out(`${kind === "approve" ? "approved" : "denied"} ${step} of ${run}`);
}

export function registerOperatorCommands(program: Command): void {
  program
    .command("renew")
    .description("move a loop's deadline: to a time, or by an extension")
    .argument("<query>", "the loop's query id")
    .option("--deadline <time>", "the new deadline (RFC 3339)")
    .option("--extend <ms>", "extend from the later of now and the current deadline")
    .option("--store <uri>", "ledger store URI")
    .action(async (query: string, o: { deadline?: string; extend?: string; store?: string }) => {
      if ((o.deadline === undefined) === (o.extend === undefined)) {
        throw new UsageError("renew takes exactly one of --deadline T and --extend MS");
      }
      await withStore(o.store, async (store) => {
        let deadline = o.deadline;
        if (o.extend !== undefined) {
          const ms = Number(o.extend);
          if (!Number.isSafeInteger(ms) || ms <= 0)
            throw new UsageError("--extend takes a positive integer (ms)");
          const doc = await new LoopLedger(store).document(query, new Date());
          if (doc === undefined) return refuse("loop/not-opened", `no loop ${query}`);
          const base = Math.max(Date.now(), Date.parse(doc.deadline));
          deadline = new Date(base + ms).toISOString().replace(/\.\d{3}Z$/, "Z");
        } else if (Number.isNaN(Date.parse(deadline ?? ""))) {
          throw new UsageError("--deadline takes an RFC 3339 time");
        }
        await loopAct(
          store,
          query,
          { op: "renew", deadline: deadline as string, operator: operatorBinding() },
          `renewed ${query} until ${deadline}`,
        );
      });
    });

  program
    .command("cancel")
    .description("cancel a loop: a running run stops at its next step boundary")
    .argument("<query>", "the loop's query id")
    .option("--store <uri>", "ledger store URI")
    .action(async (query: string, o: { store?: string }) => {
      await withStore(o.store, (store) =>
        loopAct(store, query, { op: "cancel", operator: operatorBinding() }, `cancelled ${query}`),
      );
    });

  for (const kind of ["approve", "deny"] as const) {
    program
      .command(kind)
      .description(`${kind} a mutation step of a waiting run (or its admission: STEP = admission)`)
      .argument("<run>", "the run's proposal ref (corpus-experiment:sha256:…)")
      .argument("<step>", "the step id")
      .option("--store <uri>", "ledger store URI")
      .action(async (run: string, step: string, o: { store?: string }) => {
        await withStore(o.store, (store) => decide(store, run, step, kind));
      });
  }

  program
    .command("answer")
    .description("answer the question a loop is blocked on")
    .argument("<query>", "the loop's query id")
    .argument("<text>", "the answer")
    .option("--store <uri>", "ledger store URI")
    .action(async (query: string, text: string, o: { store?: string }) => {
      await withStore(o.store, async (store) => {
        const [facts, records, acts] = await Promise.all([
          store.readFacts(query),
          store.listRecords(query),
          store.readOperatorActs(query),
        ]);
        const view = readLedger(
          facts.map((f) => f.fact),
          records,
          acts,
        );
        const pending = [...view.passages]
          .reverse()
          .find(
            (p) =>
              (p.end?.message?.type === "Question" || p.end?.message?.type === "DeadEnd") &&
              !acts.some((a) => a.kind === "answer" && a.target === p.ref),
          );
        if (pending === undefined)
          return refuse("runtime/no-question", `${query} waits for no answer`);
        await store.postOperatorAct({
          query,
          kind: "answer",
          target: pending.ref,
          text,
          operator: operatorBinding(),
          at: new Date().toISOString(),
        });
        out(`answered ${pending.ref}; continue with: warrant resume ${query}`);
      });
    });
}
