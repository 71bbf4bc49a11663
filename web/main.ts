// The operator console: loops with their state, waiting reason, budget meters and deadline; the
// approval queue across loops; a loop's page (facts, records, final diff, operator acts). Live from
// the API's event stream, read with fetch so the bearer token goes in a header (no cookie, no token
// in a URL the server sees). The token comes from the page's fragment (#token=…).
import type { RecordViewAnswer } from "../src/server/api.js";
import {
  actLine,
  diffView,
  h,
  planView,
  recordView,
  stepChange,
  VIEWED_KINDS,
  verdictView,
} from "./render.js";

type Json = Record<string, unknown>;

interface Waiting {
  readonly reason: string;
  readonly [k: string]: unknown;
}

interface LoopRow {
  readonly query: string;
  readonly task: string;
  readonly state: string;
  readonly stop?: { readonly reason: string };
  readonly waiting?: Waiting;
  readonly spent: Record<string, number>;
  readonly limits: Record<string, number>;
  readonly deadline: string;
  readonly updatedAt: string;
}

interface Pending {
  readonly query: string;
  readonly run: string;
  readonly step: string;
  readonly kind: string;
  readonly hypothesis?: string;
  readonly path?: string;
  readonly summary: string;
  readonly waitingSince: string;
}

interface Fact {
  readonly sequence: number;
  readonly "recorded-at": string;
  readonly step: Json & { readonly kind: string };
}

interface FactEvent {
  readonly position: number;
  readonly query: string;
  readonly sequence: number;
  readonly kind: string;
  readonly fact: Fact;
}

// --- the token -------------------------------------------------------------------------------

function takeToken(): string {
  const m = /(?:^#|&)token=([^&]+)/.exec(location.hash);
  if (m?.[1] !== undefined) {
    sessionStorage.setItem("warrant-token", decodeURIComponent(m[1]));
    history.replaceState(null, "", `${location.pathname}#/`);
  }
  return sessionStorage.getItem("warrant-token") ?? "";
}

const token = takeToken();
const app = document.getElementById("app") as HTMLElement;
const live = document.getElementById("live") as HTMLElement;

async function api<T>(
  path: string,
  init: { method?: string; body?: unknown } = {},
): Promise<{ status: number; body: T }> {
  const response = await fetch(path, {
    method: init.method ?? "GET",
    headers: {
      authorization: `Bearer ${token}`,
      ...(init.body === undefined ? {} : { "content-type": "application/json" }),
    },
    ...(init.body === undefined ? {} : { body: JSON.stringify(init.body) }),
  });
  return { status: response.status, body: (await response.json()) as T };
}

// --- shared pieces ---------------------------------------------------------------------------

const COUNTERS: readonly (readonly [string, string, string])[] = [
  ["passages", "max/passages", "passages"],
  ["solver-passages", "max/solver-passages", "implementer"],
  ["reviewer-passages", "max/reviewer-passages", "reviewer"],
  ["cycles", "max/cycles", "cycles"],
  ["runs", "max/experiments", "runs"],
];

function meters(spent: Record<string, number>, limits: Record<string, number>): HTMLElement {
  const box = h("div", { class: "meters" });
  for (const [key, limitKey, label] of COUNTERS) {
    const used = spent[key] ?? 0;
    const max = limits[limitKey] ?? 0;
    const ratio = max > 0 ? Math.min(1, used / max) : 1;
    // Set through the CSSOM: the page's Content-Security-Policy refuses inline style attributes.
    const fill = h("i", {});
    fill.style.width = `${Math.round(ratio * 100)}%`;
    const bar = h("span", { class: `bar${used >= max ? " full" : ""}` }, fill);
    box.append(
      h(
        "span",
        {
          class: "meter",
          "data-testid": "budget-meter",
          "data-counter": key,
          title: `${limitKey} = ${max}`,
        },
        `${label} `,
        bar,
        ` ${used}/${max}`,
      ),
    );
  }
  return box;
}

function countdown(deadline: string): HTMLElement {
  const el = h("span", { class: "countdown", "data-deadline": deadline, title: deadline });
  tickOne(el);
  return el;
}

function tickOne(el: HTMLElement): void {
  const left = Date.parse(el.dataset.deadline ?? "") - Date.now();
  if (Number.isNaN(left)) return;
  if (left <= 0) {
    el.textContent = "passed";
    return;
  }
  const s = Math.floor(left / 1000);
  const hh = Math.floor(s / 3600);
  const mm = Math.floor((s % 3600) / 60);
  const ss = s % 60;
  el.textContent = `${hh > 0 ? `${hh}h ` : ""}${String(mm).padStart(2, "0")}m ${String(ss).padStart(2, "0")}s`;
}

setInterval(() => {
  for (const el of document.querySelectorAll<HTMLElement>("[data-deadline]")) tickOne(el);
}, 1000);

function stateText(r: { state: string; stop?: { reason: string } }): HTMLElement {
  const label = r.stop === undefined ? r.state : r.stop.reason;
  return h("span", { class: `state ${label}`, "data-testid": "loop-state" }, label);
}

function waitingText(w: Waiting | undefined): HTMLElement {
  if (w === undefined) return h("span", { class: "muted" }, "—");
  const detail =
    w.reason === "approval"
      ? ` ${String(w.kind)} ${String(w.step)}`
      : w.reason === "budget"
        ? ` ${String(w.counter)}`
        : "";
  return h("span", { class: "waiting", "data-testid": "loop-waiting" }, `${w.reason}${detail}`);
}

function message(el: HTMLElement, ok: boolean, text: string): void {
  el.replaceChildren(
    h("div", { class: `message ${ok ? "ok" : "error"}`, "data-testid": "act-result" }, text),
  );
}

const loopHref = (q: string) => `#/loop/${encodeURIComponent(q)}`;

// --- the approval queue ----------------------------------------------------------------------

let pendingNow: readonly Pending[] = [];
const cards = new Map<string, HTMLElement>();
const keyOf = (p: Pending) => `${p.run} ${p.step}`;

interface ApprovalContext {
  readonly task?: string;
  readonly packChanged?: boolean;
  readonly packProblem?: string;
  readonly evidence: readonly { kind: string; name: string; run: string; text: string }[];
  readonly checks: readonly { name: string; description: string }[];
  readonly budget: readonly { counter: string; spent: number; limit: number; left: number }[];
  readonly deadline: string;
}

/** The task, what the implementer saw, the checks to come, the budget left and the deadline. */
async function fillContext(card: HTMLElement, p: Pending): Promise<void> {
  const box = card.querySelector(".context") as HTMLElement;
  const r = await api<ApprovalContext>(
    `/api/loops/${encodeURIComponent(p.query)}/approval?run=${encodeURIComponent(p.run)}`,
  );
  if (r.status !== 200) return;
  const c = r.body;
  const task = h(
    "div",
    { "data-testid": "approval-task" },
    h("strong", {}, "Task: "),
    c.task ?? h("span", { class: "muted" }, c.packProblem ?? "unknown"),
    c.packChanged === true
      ? h("span", { class: "muted" }, " (the pack file changed since the loop opened)")
      : undefined,
  );
  const evidence = h(
    "div",
    { "data-testid": "approval-evidence" },
    h("strong", {}, "What the implementer saw: "),
  );
  if (c.evidence.length === 0)
    evidence.append(h("span", { class: "muted" }, "no earlier run (the first plan of this loop)"));
  for (const e of c.evidence)
    evidence.append(
      h(
        "div",
        { class: "seen" },
        h(
          "span",
          { class: "muted" },
          `${e.kind === "check" ? "failed check" : "observation"} ${e.name} of run ${e.run.slice(-12)}`,
        ),
        h("pre", {}, e.text),
      ),
    );
  const checks = h(
    "div",
    { "data-testid": "approval-checks" },
    h("strong", {}, "Checks after approval: "),
  );
  if (c.checks.length === 0) checks.append(h("span", { class: "muted" }, "unknown"));
  const list = h("ul", {});
  for (const k of c.checks)
    list.append(h("li", {}, h("span", { class: "mono" }, k.name), ` — ${k.description}`));
  if (c.checks.length > 0) checks.append(list);
  const budget = h(
    "div",
    { "data-testid": "approval-budget" },
    h("strong", {}, "Budget left: "),
    c.budget.map((b) => `${b.counter.replace(/^max\//, "")} ${b.left} of ${b.limit}`).join(", "),
    h("span", {}, "; deadline "),
    countdown(c.deadline),
    h("span", { class: "muted" }, ` (${c.deadline})`),
  );
  box.replaceChildren(task, evidence, checks, budget);
}

async function fillCard(card: HTMLElement, p: Pending): Promise<void> {
  void fillContext(card, p);
  const detail = card.querySelector(".detail") as HTMLElement;
  const proposal = await api<Json>(`/api/records/${encodeURIComponent(p.run)}`);
  if (proposal.status === 200) {
    const candidate = proposal.body.candidate as Json | undefined;
    const steps = Array.isArray(candidate?.steps) ? (candidate.steps as Json[]) : [];
    if (p.kind === "mutation") {
      const step = steps.find((s) => s.id === p.step);
      const change = step === undefined ? undefined : stepChange(step);
      detail.append(change ?? h("pre", {}, JSON.stringify(step ?? {}, null, 2)));
    } else detail.append(planView(candidate));
  }
  const view = await api<{ records: { ref: string; kind: string }[] }>(
    `/api/loops/${encodeURIComponent(p.query)}`,
  );
  if (view.status !== 200) return;
  const reviews = view.body.records.filter((r) => r.kind === "review");
  for (const r of [...reviews].reverse()) {
    const body = await api<Json>(`/api/records/${encodeURIComponent(r.ref)}`);
    if (body.status === 200 && body.body["proposal/ref"] === p.run) {
      detail.append(verdictView(body.body.verdict));
      break;
    }
  }
}

function pendingCard(p: Pending): HTMLElement {
  const result = h("div", {});
  const reason = h("input", {
    type: "text",
    placeholder: "reason for a denial",
    "data-testid": "deny-reason",
  }) as HTMLInputElement;
  const approve = h(
    "button",
    { class: "approve", "data-testid": "approve" },
    "Approve",
  ) as HTMLButtonElement;
  const deny = h("button", { class: "deny", "data-testid": "deny" }, "Deny") as HTMLButtonElement;
  const act = async (decision: "approve" | "deny") => {
    // Acted on from here: the card stays for the act's answer even if the queue drops it first.
    card.dataset.acted = "true";
    approve.disabled = true;
    deny.disabled = true;
    const body: Json = { run: p.run, step: p.step, decision };
    if (decision === "deny" && reason.value.trim() !== "") body.reason = reason.value.trim();
    const r = await api<{ ok: boolean; message: string; code?: string }>("/api/approvals", {
      method: "POST",
      body,
    });
    message(result, r.body.ok, r.body.ok ? r.body.message : `${r.body.code}: ${r.body.message}`);
    if (!r.body.ok) {
      approve.disabled = false;
      deny.disabled = false;
    }
  };
  approve.addEventListener("click", () => void act("approve"));
  deny.addEventListener("click", () => void act("deny"));
  const card = h(
    "div",
    {
      class: "card",
      "data-testid": "pending-approval",
      "data-run": p.run,
      "data-step": p.step,
      "data-query": p.query,
    },
    h(
      "h3",
      {},
      `${p.kind === "admission" ? "Admission" : "Mutation"} ${p.step} — `,
      h("a", { href: loopHref(p.query) }, p.query),
    ),
    p.hypothesis === undefined
      ? undefined
      : h("p", {}, h("strong", {}, "Hypothesis: "), p.hypothesis),
    h(
      "p",
      { class: "mono" },
      p.summary,
      h("span", { class: "muted" }, `  waiting since ${p.waitingSince}`),
    ),
    h("div", { class: "context" }),
    h("div", { class: "detail" }),
    h("div", { class: "row" }, approve, reason, deny),
    result,
  );
  void fillCard(card, p);
  return card;
}

/** Keeps one card per pending approval, in place: a card being typed into is never rebuilt. */
function renderQueue(box: HTMLElement, filter?: string): void {
  const list = pendingNow.filter((p) => filter === undefined || p.query === filter);
  const want = new Set(list.map(keyOf));
  for (const [k, card] of cards)
    if (!want.has(k)) {
      // A card acted on from this page stays, with what the act did, until the page is left: the
      // loop may move on (and the live queue drop it) before the act's answer comes. It is no
      // longer a pending approval.
      if (card.dataset.acted === "true") {
        card.dataset.testid = "acted-approval";
        card.classList.add("acted");
        continue;
      }
      card.remove();
      cards.delete(k);
    }
  for (const p of list) {
    let card = cards.get(keyOf(p));
    if (card === undefined) {
      card = pendingCard(p);
      cards.set(keyOf(p), card);
    }
    if (card.parentElement !== box) box.append(card);
  }
  const empty = box.querySelector(".empty");
  if (list.length === 0 && empty === null)
    box.append(h("div", { class: "empty" }, "No approval is waited for."));
  if (list.length > 0) empty?.remove();
}

// --- views -----------------------------------------------------------------------------------

interface View {
  onFact(e: FactEvent): void;
  onPending(): void;
  /**
   * The event stream (re)connected: it tells what happens from its start on, so what happened
   * between the view's own load and that start is read again (the pending set comes on the stream).
   */
  onReady(): void;
}

let view: View | undefined;

/** A view's refresh: asked for by each fact (`ask`), or run at once when the view opens (`now`). */
interface Refresh {
  ask(): void;
  now(): void;
}

/**
 * A view's refresh, asked for by each fact: it runs `ms` after the first ask and, while asks keep
 * coming, at most once every `ms`, so a steady stream of facts (an eval, a fleet of workers) still
 * refreshes the view as it goes (a timer restarted at each ask waits for the stream to pause).
 * Refreshes never overlap: one due while another runs follows it, so the last one shown is never
 * older than the last ask.
 */
function coalesced(refresh: () => Promise<void>, ms: number): Refresh {
  let scheduled = false;
  let running = false;
  let again = false;
  const now = async () => {
    if (running) {
      again = true;
      return;
    }
    running = true;
    try {
      await refresh();
    } finally {
      running = false;
      if (again) {
        again = false;
        ask();
      }
    }
  };
  const ask = () => {
    if (scheduled) return;
    scheduled = true;
    window.setTimeout(() => {
      scheduled = false;
      void now();
    }, ms);
  };
  return { ask, now: () => void now() };
}

function homeView(): View {
  cards.clear();
  const queue = h("div", { id: "queue" });
  const tbody = h("tbody", {});
  app.replaceChildren(
    h("h2", {}, "Approval queue"),
    queue,
    h("h2", {}, "Loops"),
    h(
      "table",
      {},
      h(
        "thead",
        {},
        h(
          "tr",
          {},
          ...["loop", "task", "state", "waiting", "budgets", "deadline", "updated"].map((t) =>
            h("th", {}, t),
          ),
        ),
      ),
      tbody,
    ),
  );
  const refresh = async () => {
    const r = await api<LoopRow[]>("/api/loops");
    if (r.status !== 200) return;
    tbody.replaceChildren(
      ...r.body.map((row) =>
        h(
          "tr",
          { "data-testid": "loop-row", "data-query": row.query },
          h("td", {}, h("a", { href: loopHref(row.query), class: "mono" }, row.query)),
          h("td", {}, row.task),
          h("td", {}, stateText(row)),
          h("td", {}, waitingText(row.waiting)),
          h("td", {}, meters(row.spent, row.limits)),
          h(
            "td",
            {},
            row.state === "stopped" ? h("span", { class: "muted" }, "—") : countdown(row.deadline),
          ),
          h("td", { class: "muted" }, row.updatedAt.replace("T", " ").replace(/\.\d+Z$/, "Z")),
        ),
      ),
    );
    if (r.body.length === 0)
      tbody.replaceChildren(
        h("tr", {}, h("td", { colspan: "7", class: "empty" }, "No loop in this store yet.")),
      );
  };
  const later = coalesced(refresh, 250);
  later.now();
  renderQueue(queue);
  return {
    onFact: () => later.ask(),
    onPending: () => {
      renderQueue(queue);
      later.ask();
    },
    onReady: () => later.ask(),
  };
}

const FACT_CHUNK = 200;

function describeStep(step: Json & { kind: string }): string {
  const s = step as Record<string, unknown>;
  switch (step.kind) {
    case "opened":
      return `until ${String(s.deadline)}`;
    case "passage-charged":
      return `${String(s.role)} ${String(s["passage/ref"])}`;
    case "cycle-opened":
    case "run-admitted":
      return String(s["proposal/ref"]);
    case "concluded":
      return `${String(s.outcome)}${s["refusal/code"] === undefined ? "" : ` (${String(s["refusal/code"])})`}`;
    case "renewed":
      return `until ${String(s.deadline)}`;
    default:
      return "";
  }
}

function factRow(f: Fact): HTMLElement {
  return h(
    "div",
    { class: "fact", "data-testid": "fact-row", "data-sequence": String(f.sequence) },
    h("span", { class: "mono" }, String(f.sequence)),
    h("span", { class: "muted" }, f["recorded-at"]),
    h("span", {}, f.step.kind),
    h("span", { class: "mono" }, describeStep(f.step)),
  );
}

interface Decision {
  readonly run: string;
  readonly step: string;
  readonly kind: string;
  readonly operator: string;
  readonly at: string;
  readonly text?: string;
}

interface LoopPage {
  readonly loop: Json & { facts: Fact[] };
  readonly records: { ref: string; kind: string }[];
  readonly waiting?: Waiting;
  readonly result?: { outcome: string; summary: string; evidence: readonly string[] };
  readonly decisions?: readonly Decision[];
  readonly ok?: boolean;
  readonly message?: string;
}

/** A stopped loop's Result (the summarizer's), and who approved or denied each step. */
function conclusionView(stopped: boolean, page: LoopPage): HTMLElement {
  const box = h("div", {});
  if (stopped) {
    const res = page.result;
    box.append(
      h("h2", {}, "Result"),
      res === undefined
        ? h("div", { class: "empty", "data-testid": "loop-result" }, "no Result was written")
        : h(
            "div",
            { class: "card", "data-testid": "loop-result" },
            h("p", {}, h("strong", {}, `${res.outcome}: `), res.summary),
            res.evidence.length === 0
              ? undefined
              : h("p", { class: "muted" }, `evidence: ${res.evidence.join("; ")}`),
          ),
    );
  }
  const decisions = page.decisions ?? [];
  if (stopped || decisions.length > 0) {
    const list = h("div", { "data-testid": "loop-decisions" });
    if (decisions.length === 0)
      list.append(h("div", { class: "empty" }, "no step was approved or denied by an operator"));
    for (const d of decisions)
      list.append(
        h(
          "div",
          { class: "decision", "data-testid": "decision", "data-step": d.step },
          actLine({
            kind: d.kind,
            target: `${d.run} ${d.step}`,
            operator: d.operator,
            at: d.at,
            ...(d.text === undefined ? {} : { text: d.text }),
          }),
          h("span", { class: "muted mono" }, `  run ${d.run.slice(-12)}`),
        ),
      );
    box.append(h("h2", {}, "Approvals"), list);
  }
  return box;
}

function loopView(query: string): View {
  cards.clear();
  const head = h("div", {});
  const queue = h("div", {});
  const result = h("div", {});
  const timeline = h("div", { class: "timeline", "data-testid": "timeline" });
  const records = h("div", {});
  const diff = h("div", {});
  let shown = 0;
  let known = 0;
  const extend = h("input", {
    type: "number",
    value: "30",
    min: "1",
    "data-testid": "renew-minutes",
  }) as HTMLInputElement;
  const answer = h("input", {
    type: "text",
    placeholder: "answer to the implementer",
    "data-testid": "answer-text",
  }) as HTMLInputElement;
  const act = async (path: string, body: Json) => {
    const r = await api<{ ok: boolean; message: string; code?: string }>(
      `/api/loops/${encodeURIComponent(query)}/${path}`,
      { method: "POST", body },
    );
    message(result, r.body.ok, r.body.ok ? r.body.message : `${r.body.code}: ${r.body.message}`);
  };
  const renew = h("button", { "data-testid": "renew" }, "Renew");
  renew.addEventListener(
    "click",
    () => void act("renew", { extendMs: Math.round(Number(extend.value) * 60_000) }),
  );
  const cancel = h("button", { "data-testid": "cancel" }, "Cancel loop");
  cancel.addEventListener("click", () => {
    if (confirm(`Cancel ${query}?`)) void act("cancel", {});
  });
  const answerButton = h("button", { "data-testid": "answer" }, "Answer");
  answerButton.addEventListener("click", () => void act("answer", { text: answer.value }));

  // The acts on the loop, shown once it is known not to be stopped: a stopped loop takes none.
  const controls = h("div", { class: "row", "data-testid": "loop-controls" });
  const conclusion = h("div", {});
  app.replaceChildren(
    head,
    controls,
    result,
    conclusion,
    h("h2", {}, "Waiting approvals"),
    queue,
    h("h2", {}, "Final diff"),
    diff,
    h("h2", {}, "Facts"),
    timeline,
    h("h2", {}, "Records"),
    records,
  );

  let facts: Fact[] = [];
  /** Renders facts a chunk per frame: a long loop never blocks the page. */
  const drain = () => {
    const end = Math.min(facts.length, shown + FACT_CHUNK);
    const frag = document.createDocumentFragment();
    for (; shown < end; shown++) frag.append(factRow(facts[shown] as Fact));
    timeline.append(frag);
    if (shown < facts.length) requestAnimationFrame(drain);
  };

  const renderedRecords = new Set<string>();
  const load = async () => {
    const r = await api<LoopPage>(`/api/loops/${encodeURIComponent(query)}`);
    if (r.status !== 200) {
      head.replaceChildren(
        h("div", { class: "message error" }, r.body.message ?? `no loop ${query}`),
      );
      return;
    }
    const doc = r.body.loop as Json & {
      facts: Fact[];
      state: string;
      stop?: { reason: string };
      deadline: string;
    };
    if (doc.state === "stopped") controls.remove();
    else if (controls.childElementCount === 0)
      controls.append("extend by", extend, "minutes", renew, cancel, answer, answerButton);
    conclusion.replaceChildren(conclusionView(doc.state === "stopped", r.body));
    head.replaceChildren(
      h(
        "h2",
        { "data-testid": "loop-row", "data-query": query },
        h("span", { class: "mono" }, query),
        " ",
        stateText(doc),
        " ",
        waitingText(r.body.waiting),
      ),
      meters(doc.spent as Record<string, number>, doc.limits as Record<string, number>),
      h("p", {}, "deadline ", doc.state === "stopped" ? doc.deadline : countdown(doc.deadline)),
    );
    const startAt = shown === 0 && facts.length === 0;
    facts = doc.facts;
    known = Math.max(known, facts.length);
    if (startAt || shown < facts.length) requestAnimationFrame(drain);
    for (const rec of r.body.records) {
      if (renderedRecords.has(rec.ref)) continue;
      renderedRecords.add(rec.ref);
      const body = h("div", {});
      const details = h(
        "details",
        { class: "record", "data-testid": "record", "data-kind": rec.kind },
        h(
          "summary",
          {},
          h("strong", {}, rec.kind),
          " ",
          h("span", { class: "mono muted" }, rec.ref),
        ),
        body,
      );
      details.addEventListener("toggle", async () => {
        if (!(details as HTMLDetailsElement).open || body.childElementCount > 0) return;
        const ref = encodeURIComponent(rec.ref);
        if (VIEWED_KINDS.has(rec.kind)) {
          // With what is kept beside it: an execution's report and acts, a changeset's diff.
          const v = await api<RecordViewAnswer>(`/api/records/${ref}/view`);
          body.append(recordView(rec.kind, v.body.body, v.body));
        } else {
          const b = await api<unknown>(`/api/records/${ref}`);
          body.append(recordView(rec.kind, b.body));
        }
      });
      records.append(details);
    }
    const d = await api<{
      diff?: string;
      files?: { path: string }[];
      code?: string;
      message?: string;
    }>(`/api/loops/${encodeURIComponent(query)}/diff`);
    if (d.status === 200 && typeof d.body.diff === "string")
      diff.replaceChildren(diffView(d.body.diff));
    else diff.replaceChildren(h("div", { class: "empty" }, d.body.message ?? "no diff"));
  };
  const later = coalesced(load, 250);
  later.now();
  renderQueue(queue, query);
  return {
    onFact: (e) => {
      if (e.query !== query) return;
      if (e.sequence === known + 1 && shown === facts.length) {
        facts.push(e.fact);
        known = e.sequence;
        timeline.append(factRow(e.fact));
        shown++;
      }
      later.ask();
    },
    onPending: () => renderQueue(queue, query),
    onReady: () => later.ask(),
  };
}

// --- evals -----------------------------------------------------------------------------------

interface EvalRow {
  readonly eval: string;
  readonly set: { readonly name: string };
  readonly agents: readonly string[];
  readonly tasks: readonly string[];
  readonly cells: number;
  readonly done: number;
  readonly passed: number;
  readonly status: string;
}

interface EvalCell {
  readonly task: string;
  readonly agent: string;
  readonly epoch: number;
  readonly query: string;
  readonly outcome: string;
  readonly stop: string | null;
}

interface EvalAgent {
  readonly agent: string;
  readonly scored: number;
  readonly passed: number;
  readonly errors: number;
  readonly passRate: number | null;
  readonly ci95: readonly [number, number];
  readonly passAtK: Record<string, number | null>;
}

interface EvalReport {
  readonly eval: string;
  readonly set: { readonly name: string };
  readonly epochs: number;
  readonly status: string;
  readonly cells: readonly EvalCell[];
  readonly agents: readonly EvalAgent[];
  readonly tasks: readonly { task: string; certified: boolean; quarantined: boolean }[];
}

const evalHref = (id: string) => `#/eval/${encodeURIComponent(id)}`;
const pct = (v: number | null) => (v === null ? "—" : `${(v * 100).toFixed(1)}%`);

function evalsView(): View {
  cards.clear();
  const tbody = h("tbody", {});
  app.replaceChildren(
    h("h2", {}, "Evals"),
    h(
      "table",
      {},
      h(
        "thead",
        {},
        h(
          "tr",
          {},
          ...["eval", "set", "agents", "tasks", "progress", "passed", "status"].map((t) =>
            h("th", {}, t),
          ),
        ),
      ),
      tbody,
    ),
  );
  const refresh = async () => {
    const r = await api<EvalRow[]>("/api/evals");
    if (r.status !== 200) return;
    tbody.replaceChildren(
      ...r.body.map((row) =>
        h(
          "tr",
          { "data-testid": "eval-row", "data-eval": row.eval },
          h("td", {}, h("a", { href: evalHref(row.eval), class: "mono" }, row.eval)),
          h("td", {}, row.set.name),
          h("td", {}, row.agents.join(", ")),
          h("td", {}, String(row.tasks.length)),
          h("td", { "data-testid": "eval-progress" }, `${row.done}/${row.cells}`),
          h("td", {}, String(row.passed)),
          h("td", { "data-testid": "eval-status" }, row.status),
        ),
      ),
    );
    if (r.body.length === 0)
      tbody.replaceChildren(
        h("tr", {}, h("td", { colspan: "7", class: "empty" }, "No eval in this store yet.")),
      );
  };
  const later = coalesced(refresh, 250);
  later.now();
  return { onFact: () => later.ask(), onPending: () => undefined, onReady: () => later.ask() };
}

function evalView(id: string): View {
  cards.clear();
  const head = h("div", {});
  const matrix = h("div", {});
  const agents = h("div", {});
  app.replaceChildren(head, h("h2", {}, "Tasks × agents"), matrix, h("h2", {}, "Agents"), agents);
  const refresh = async () => {
    const r = await api<EvalReport & { message?: string }>(`/api/evals/${encodeURIComponent(id)}`);
    if (r.status !== 200) {
      head.replaceChildren(h("div", { class: "message error" }, r.body.message ?? `no eval ${id}`));
      return;
    }
    const rep = r.body;
    const done = rep.cells.filter((c) => c.outcome !== "pending" && c.outcome !== "not-run").length;
    head.replaceChildren(
      h(
        "h2",
        { "data-testid": "eval-head", "data-eval": rep.eval },
        h("span", { class: "mono" }, rep.eval),
        ` ${rep.set.name} · ${rep.epochs} epoch(s) · `,
        h("span", { "data-testid": "eval-status" }, rep.status),
        ` · ${done}/${rep.cells.length} cells`,
      ),
    );
    const names = rep.agents.map((a) => a.agent);
    const rows = rep.tasks.map((t) =>
      h(
        "tr",
        {},
        h(
          "th",
          {},
          t.task,
          t.quarantined ? h("span", { class: "muted" }, " quarantined") : undefined,
        ),
        ...names.map((a) => {
          const mine = rep.cells.filter((c) => c.task === t.task && c.agent === a);
          const passed = mine.filter((c) => c.outcome === "passed").length;
          const scored = mine.filter(
            (c) => c.outcome === "passed" || c.outcome === "failed",
          ).length;
          return h(
            "td",
            {
              "data-testid": "eval-cell",
              "data-task": t.task,
              "data-agent": a,
              class: "eval-cell",
            },
            h("strong", { "data-testid": "eval-count" }, `${passed}/${scored}`),
            " ",
            ...mine.map((c) =>
              h(
                "a",
                {
                  href: loopHref(c.query),
                  class: `epoch ${c.outcome}`,
                  title: `epoch ${c.epoch}: ${c.outcome}${c.stop === null ? "" : ` (${c.stop})`} — ${c.query}`,
                  "data-testid": "eval-epoch",
                  "data-outcome": c.outcome,
                },
                String(c.epoch),
              ),
            ),
          );
        }),
      ),
    );
    matrix.replaceChildren(
      h(
        "table",
        {},
        h("thead", {}, h("tr", {}, h("th", {}, "task"), ...names.map((a) => h("th", {}, a)))),
        h("tbody", {}, ...rows),
      ),
    );
    agents.replaceChildren(
      h(
        "table",
        {},
        h(
          "thead",
          {},
          h(
            "tr",
            {},
            ...["agent", "scored", "passed", "errors", "pass rate", "95% (Wilson)", "pass@k"].map(
              (x) => h("th", {}, x),
            ),
          ),
        ),
        h(
          "tbody",
          {},
          ...rep.agents.map((a) =>
            h(
              "tr",
              { "data-testid": "eval-agent", "data-agent": a.agent },
              h("td", {}, a.agent),
              h("td", {}, String(a.scored)),
              h("td", {}, String(a.passed)),
              h("td", {}, String(a.errors)),
              h("td", {}, pct(a.passRate)),
              h("td", {}, `${pct(a.ci95[0])} – ${pct(a.ci95[1])}`),
              h(
                "td",
                {},
                Object.entries(a.passAtK)
                  .map(([k, v]) => `@${k} ${pct(v)}`)
                  .join("  "),
              ),
            ),
          ),
        ),
      ),
    );
  };
  const later = coalesced(refresh, 250);
  later.now();
  return { onFact: () => later.ask(), onPending: () => undefined, onReady: () => later.ask() };
}

function route(): void {
  const m = /^#\/loop\/(.+)$/.exec(location.hash);
  const e = /^#\/eval\/(.+)$/.exec(location.hash);
  view =
    m?.[1] !== undefined
      ? loopView(decodeURIComponent(m[1]))
      : e?.[1] !== undefined
        ? evalView(decodeURIComponent(e[1]))
        : location.hash === "#/evals"
          ? evalsView()
          : homeView();
}

// --- the event stream ------------------------------------------------------------------------

let lastEventId: string | undefined;

async function follow(): Promise<void> {
  for (;;) {
    try {
      const response = await fetch("/api/events", {
        headers: {
          authorization: `Bearer ${token}`,
          ...(lastEventId === undefined ? {} : { "last-event-id": lastEventId }),
        },
      });
      if (response.status === 401) {
        live.className = "live off";
        live.textContent = "the token was refused: open the URL warrant serve printed";
        return;
      }
      if (response.body === null) throw new Error("no stream");
      live.className = "live on";
      live.textContent = "live";
      const reader = response.body.getReader();
      const decoder = new TextDecoder();
      let buffer = "";
      for (;;) {
        const { done, value } = await reader.read();
        if (done) break;
        buffer += decoder.decode(value, { stream: true });
        let end = buffer.indexOf("\n\n");
        while (end >= 0) {
          dispatch(buffer.slice(0, end));
          buffer = buffer.slice(end + 2);
          end = buffer.indexOf("\n\n");
        }
      }
    } catch {
      // reconnect below
    }
    live.className = "live off";
    live.textContent = "reconnecting";
    await new Promise((r) => setTimeout(r, 2000));
  }
}

function dispatch(block: string): void {
  let event = "message";
  let id: string | undefined;
  const data: string[] = [];
  for (const line of block.split("\n")) {
    if (line.startsWith(":")) continue;
    const i = line.indexOf(":");
    const field = i < 0 ? line : line.slice(0, i);
    const value = i < 0 ? "" : line.slice(i + 1).replace(/^ /, "");
    if (field === "event") event = value;
    else if (field === "id") id = value;
    else if (field === "data") data.push(value);
  }
  if (id !== undefined) lastEventId = id;
  if (event === "ready") view?.onReady();
  else if (event === "fact") view?.onFact(JSON.parse(data.join("\n")) as FactEvent);
  else if (event === "pending") {
    pendingNow = JSON.parse(data.join("\n")) as Pending[];
    view?.onPending();
  }
}

/** Whose token this page holds (`serve --operators`): their acts are recorded by that name. */
async function who(): Promise<void> {
  const r = await api<{ operator: string | null }>("/api/session");
  const el = document.getElementById("store");
  if (r.status === 200 && r.body.operator !== null && el !== null) {
    el.textContent = `acting as ${r.body.operator}`;
    el.setAttribute("data-testid", "operator");
  }
}

window.addEventListener("hashchange", route);
void who();
route();
void follow();
