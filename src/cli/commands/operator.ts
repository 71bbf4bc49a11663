// Operator acts from any terminal: `renew`, `cancel` (loop facts) and `approve`, `deny`, `answer`
// (operator acts a waiting run polls for). With `--json`: `{ok, result?, code?, message}`. An act
// says `posted` only when it is the one that counts: the first for its target, as the store decides
// atomically; a later one is refused `hil/already-answered` with the act that counts, and an act on
// a stopped loop (or a run already concluded) is refused before it is posted.
import type { Command } from "commander";
import type {
  LedgerStore,
  OperatorAct,
  PostedAct,
  StoredFact,
} from "../../core/loop/ledger-store.js";
import { fold } from "../../core/loop/state.js";
import type { LoopCommand } from "../../core/loop/types.js";
import { ADMISSION_STEP, approvalTarget, readLedger } from "../../runtime/ledger-view.js";
import { LoopLedger } from "../../runtime/loop-ledger.js";
import { EXIT_INVALID, err, out, printJson, UsageError } from "../io.js";
import { withStore } from "./inspect.js";
import { operatorBinding } from "./run.js";

/** How an operator command reports: plain lines, or one JSON object. */
class Reply {
  constructor(private readonly json: boolean) {}

  refuse(code: string, message: string, answer?: OperatorAct): void {
    if (this.json)
      printJson({ ok: false, code, message, ...(answer === undefined ? {} : { answer }) });
    else err(`warrant: ${code}: ${message}`);
    process.exitCode = EXIT_INVALID;
  }

  /** `posted` when the act counts; else `hil/already-answered` with the act that does. */
  posted(outcome: PostedAct, message: string): void {
    if (outcome.posted) {
      this.done(message, "posted");
      return;
    }
    const c = outcome.counting;
    const what = c.kind === "answer" ? `answered ${JSON.stringify(c.text ?? "")}` : `${c.kind}d`;
    this.refuse(
      "hil/already-answered",
      `not posted: ${c.target} was already ${what} by ${c.operator} at ${c.at}; that act counts`,
      c,
    );
  }

  done(message: string, result: "appended" | "replayed" | "posted"): void {
    if (this.json) printJson({ ok: true, result, message });
    else out(message);
  }
}

interface Common {
  readonly store?: string;
  readonly json?: boolean;
}

async function loopAct(
  reply: Reply,
  store: LedgerStore,
  query: string,
  command: LoopCommand,
  message: string,
): Promise<void> {
  const d = await new LoopLedger(store).execute(query, command, new Date());
  if (d.result === "refused") reply.refuse(d.refusal.code, d.refusal.message);
  else if (d.result === "appended") reply.done(message, "appended");
  else reply.done(`${message} (already recorded: nothing appended)`, "replayed");
}

/** A refusal when the loop has stopped, or (for a run) when the run was already concluded. */
function closed(
  facts: readonly StoredFact[],
  query: string,
  run?: string,
): { code: string; message: string } | undefined {
  const state = fold(facts.map((f) => f.fact));
  if (state.stop !== undefined) {
    return {
      code: "loop/already-stopped",
      message: `${query} stopped ${state.stop.reason} at fact ${state.stop.sequence}: nothing waits for this act`,
    };
  }
  const concluded = state.facts.find(
    (f) => f.step.kind === "concluded" && f.step["proposal/ref"] === run,
  );
  if (run !== undefined && concluded !== undefined) {
    return {
      code: "loop/already-concluded",
      message: `the run of ${run} was concluded at fact ${concluded.sequence}: nothing waits for this act`,
    };
  }
  return undefined;
}

/** Approve or deny STEP of RUN (a proposal ref, or `admission` for an operator-admitted run). */
async function decide(
  reply: Reply,
  store: LedgerStore,
  run: string,
  step: string,
  kind: "approve" | "deny",
): Promise<void> {
  const proposal = await store.readRecord(run);
  if (proposal === undefined || proposal.kind !== "proposal") {
    reply.refuse("loop/run-missing", `no run ${run} in ${store.uri}`);
    return;
  }
  const candidate = (proposal.body as { candidate?: { steps?: { id?: unknown }[] } }).candidate;
  const steps = (candidate?.steps ?? []).map((s) => s.id);
  if (step !== ADMISSION_STEP && !steps.includes(step)) {
    reply.refuse("loop/run-missing", `run ${run} has no step ${step} (steps: ${steps.join(", ")})`);
    return;
  }
  const refusal = closed(await store.readFacts(proposal.query), proposal.query, run);
  if (refusal !== undefined) {
    reply.refuse(refusal.code, refusal.message);
    return;
  }
  const outcome = await store.postOperatorAct({
    query: proposal.query,
    kind,
    target: approvalTarget(run, step),
    operator: operatorBinding(),
    at: new Date().toISOString(),
  });
  reply.posted(outcome, `${kind === "approve" ? "approved" : "denied"} ${step} of ${run}`);
}

async function answer(
  reply: Reply,
  store: LedgerStore,
  query: string,
  text: string,
): Promise<void> {
  const [facts, records, acts] = await Promise.all([
    store.readFacts(query),
    store.listRecords(query),
    store.readOperatorActs(query),
  ]);
  const refusal = closed(facts, query);
  if (refusal !== undefined) {
    reply.refuse(refusal.code, refusal.message);
    return;
  }
  const view = readLedger(
    facts.map((f) => f.fact),
    records,
    acts,
  );
  // The latest question is the one the loop waits on; once answered, a later answer is refused
  // with the answer that counts.
  const pending = [...view.passages].reverse().find((p) => {
    const type = p.end?.message?.type;
    return type === "Question" || type === "DeadEnd";
  });
  if (pending === undefined) {
    reply.refuse("runtime/no-question", `${query} waits for no answer`);
    return;
  }
  const answered = acts.find((a) => a.kind === "answer" && a.target === pending.ref);
  if (answered !== undefined) {
    reply.posted({ posted: false, counting: answered }, "");
    return;
  }
  const outcome = await store.postOperatorAct({
    query,
    kind: "answer",
    target: pending.ref,
    text,
    operator: operatorBinding(),
    at: new Date().toISOString(),
  });
  reply.posted(outcome, `answered ${pending.ref}; continue with: warrant resume ${query}`);
}

async function renewDeadline(
  reply: Reply,
  store: LedgerStore,
  query: string,
  o: { deadline?: string; extend?: string },
): Promise<void> {
  let deadline = o.deadline;
  if (o.extend !== undefined) {
    const ms = Number(o.extend);
    if (!Number.isSafeInteger(ms) || ms <= 0) {
      throw new UsageError("--extend takes a positive integer (ms)");
    }
    // MS from now: the loop refuses a deadline not later than the current one, or more than its
    // max/wall-time-ms after now (loop/renewal-invalid).
    deadline = new Date(Date.now() + ms).toISOString();
  } else if (Number.isNaN(Date.parse(deadline ?? ""))) {
    throw new UsageError("--deadline takes an RFC 3339 time");
  }
  const at = deadline as string;
  const command: LoopCommand = { op: "renew", deadline: at, operator: operatorBinding() };
  await loopAct(reply, store, query, command, `renewed ${query} until ${at}`);
}

export function registerOperatorCommands(program: Command): void {
  program
    .command("renew")
    .description("move a loop's deadline: to a time, or by an extension")
    .argument("<query>", "the loop's query id")
    .option("--deadline <time>", "the new deadline (RFC 3339)")
    .option("--extend <ms>", "the new deadline is MS from now")
    .option(
      "--store <uri>",
      "ledger store URI (default: $WARRANT_STORE, else sqlite:.warrant/ledger.db)",
    )
    .option("--json", "machine output: {ok, result?, code?, message}")
    .action(async (query: string, o: Common & { deadline?: string; extend?: string }) => {
      if ((o.deadline === undefined) === (o.extend === undefined)) {
        throw new UsageError("renew takes exactly one of --deadline T and --extend MS");
      }
      await withStore(o.store, (store) =>
        renewDeadline(new Reply(o.json === true), store, query, o),
      );
    });

  program
    .command("cancel")
    .description("cancel a loop: a running run stops at its next step boundary")
    .argument("<query>", "the loop's query id")
    .option(
      "--store <uri>",
      "ledger store URI (default: $WARRANT_STORE, else sqlite:.warrant/ledger.db)",
    )
    .option("--json", "machine output: {ok, result?, code?, message}")
    .action(async (query: string, o: Common) => {
      const command: LoopCommand = { op: "cancel", operator: operatorBinding() };
      await withStore(o.store, (store) =>
        loopAct(new Reply(o.json === true), store, query, command, `cancelled ${query}`),
      );
    });

  for (const kind of ["approve", "deny"] as const) {
    program
      .command(kind)
      .description(`${kind} a mutation step of a waiting run (or its admission: STEP = admission)`)
      .argument("<run>", "the run's proposal ref (corpus-experiment:sha256:…)")
      .argument("<step>", "the step id")
      .option(
        "--store <uri>",
        "ledger store URI (default: $WARRANT_STORE, else sqlite:.warrant/ledger.db)",
      )
      .option("--json", "machine output: {ok, result?, code?, message}")
      .action(async (run: string, step: string, o: Common) => {
        await withStore(o.store, (store) =>
          decide(new Reply(o.json === true), store, run, step, kind),
        );
      });
  }

  program
    .command("answer")
    .description("answer the question a loop is blocked on")
    .argument("<query>", "the loop's query id")
    .argument("<text>", "the answer")
    .option(
      "--store <uri>",
      "ledger store URI (default: $WARRANT_STORE, else sqlite:.warrant/ledger.db)",
    )
    .option("--json", "machine output: {ok, result?, code?, message}")
    .action(async (query: string, text: string, o: Common) => {
      await withStore(o.store, (store) => answer(new Reply(o.json === true), store, query, text));
    });
}
