// The console's API as a fetch handler, called without a socket, over a SQLite store that a
// `warrant run` without --yes writes from another process: auth (401), foreign origins (403), every
// route with its 400/404/409 refusals, approvals through the same acts as the CLI, and the event
// stream resumed with Last-Event-ID; the framing headers on every response, the Host allow-list,
// no body byte read before the token and the origin pass, malformed escapes, the Bearer scheme in
// any case, and origins that only start like the console's own.
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createWarrant, type Warrant } from "../../src/library/create-warrant.js";
import { type ConsoleHandler, createConsoleHandler } from "../../src/server/console-handler.js";
import { demoPack, type Running, scripted, startRun } from "../e2e/cli-run.js";
import { runCli } from "../helpers/cli.js";
import { readEvents } from "./sse.js";

const TOKEN = "test-token-0123456789";
const HOST = "127.0.0.1:7777";
const ORIGIN = `http://${HOST}`;
const APPROVAL = /warrant approve (\S+) (\S+) \| warrant deny/;
const models = ["implementer", "reviewer", "summarizer"].flatMap((r) => ["--model", scripted(r)]);

let dir = "";
let store = "";
let warrant: Warrant;
let handler: ConsoleHandler;

beforeAll(async () => {
  dir = mkdtempSync(path.join(tmpdir(), "warrant-console-"));
  store = `sqlite:${path.join(dir, "ledger.db")}`;
  warrant = await createWarrant({ store, sandbox: "none", signer: "none" });
  handler = createConsoleHandler({
    warrant,
    token: TOKEN,
    origins: [ORIGIN],
    hosts: [HOST],
    heartbeatMs: 200,
  });
});
afterAll(async () => {
  await handler.close();
  await warrant.close();
  rmSync(dir, { recursive: true, force: true });
});

function call(
  method: string,
  pathname: string,
  o: {
    body?: unknown;
    token?: string | null;
    origin?: string;
    headers?: Record<string, string>;
  } = {},
): Promise<Response> {
  const headers: Record<string, string> = { ...o.headers };
  if (o.token !== null) headers.authorization = `Bearer ${o.token ?? TOKEN}`;
  if (o.origin !== undefined) headers.origin = o.origin;
  if (o.body !== undefined) headers["content-type"] = "application/json";
  return handler.fetch(
    new Request(`${ORIGIN}${pathname}`, {
      method,
      headers,
      ...(o.body === undefined
        ? {}
        : { body: typeof o.body === "string" ? o.body : JSON.stringify(o.body) }),
    }),
  );
}

async function expectRefusal(r: Response, status: number, code: string): Promise<void> {
  expect(r.status).toBe(status);
  expect(await r.json()).toMatchObject({ ok: false, code, message: expect.any(String) });
}

const run = (cwd: string): Running => startRun([demoPack, ...models, "--store", store], cwd);

describe("the console API", () => {
  it("refuses every /api request without the bearer token (401), whatever the route", async () => {
    for (const [method, p] of [
      ["GET", "/api/loops"],
      ["GET", "/api/pending"],
      ["GET", "/api/events"],
      ["POST", "/api/approvals"],
      ["GET", "/api/no-such-route"],
    ] as const) {
      await expectRefusal(await call(method, p, { token: null }), 401, "auth/token-required");
      await expectRefusal(
        await call(method, p, { token: "wrong-token-0123456789" }),
        401,
        "auth/token-required",
      );
      await expectRefusal(
        await call(method, p, { token: `${TOKEN}x` }),
        401,
        "auth/token-required",
      );
    }
    const basic = await call("GET", "/api/loops", {
      token: null,
      headers: { authorization: `Basic ${TOKEN}` },
    });
    expect(basic.status).toBe(401);
    expect(basic.headers.get("www-authenticate")).toContain("Bearer");
    expect(basic.headers.get("set-cookie")).toBeNull();
  });

  it("refuses a state-changing request from a foreign Origin (403) even with the token", async () => {
    const body = {
      run: `corpus-experiment:sha256:${"x".repeat(43)}`,
      step: "s",
      decision: "approve",
    };
    await expectRefusal(
      await call("POST", "/api/approvals", { body, origin: "http://evil.example" }),
      403,
      "auth/foreign-origin",
    );
    await expectRefusal(
      await call("POST", "/api/loops/query:x/cancel", {
        body: {},
        origin: "http://127.0.0.1:7778",
      }),
      403,
      "auth/foreign-origin",
    );
    // Its own origin, or none (a script), reaches the route: here an unknown run (404).
    await expectRefusal(
      await call("POST", "/api/approvals", { body, origin: ORIGIN }),
      404,
      "loop/run-missing",
    );
    await expectRefusal(await call("POST", "/api/approvals", { body }), 404, "loop/run-missing");
    // A run prefix too short to name one run is the request's fault (400).
    await expectRefusal(
      await call("POST", "/api/approvals", { body: { ...body, run: "abc" } }),
      400,
      "hil/ref-too-short",
    );
  });

  it("answers unknown routes, loops and records with 404, bad filters and bodies with 400", async () => {
    await expectRefusal(await call("GET", "/api/nothing"), 404, "api/not-found");
    await expectRefusal(await call("DELETE", "/api/loops"), 404, "api/not-found");
    await expectRefusal(await call("GET", "/api/loops/query:none"), 404, "loop/not-opened");
    await expectRefusal(await call("GET", "/api/loops/query:none/diff"), 404, "loop/not-opened");
    await expectRefusal(
      await call("GET", "/api/loops/query:none/approval"),
      404,
      "loop/not-opened",
    );
    await expectRefusal(
      await call("GET", "/api/records/corpus-experiment:sha256:x/view"),
      404,
      "record/not-found",
    );
    await expectRefusal(
      await call("GET", "/api/records/corpus-experiment:sha256:x"),
      404,
      "record/not-found",
    );
    await expectRefusal(await call("GET", "/api/loops?state=sleeping"), 400, "request/invalid");
    await expectRefusal(await call("GET", "/api/loops?waiting=coffee"), 400, "request/invalid");
    await expectRefusal(
      await call("POST", "/api/approvals", { body: "{not json" }),
      400,
      "request/invalid",
    );
    await expectRefusal(await call("POST", "/api/approvals", { body: [] }), 400, "request/invalid");
    await expectRefusal(
      await call("POST", "/api/approvals", { body: { run: "r", step: "s", decision: "maybe" } }),
      400,
      "request/invalid",
    );
    await expectRefusal(
      await call("POST", "/api/approvals", { body: { run: "r", decision: "approve" } }),
      400,
      "request/invalid",
    );
    await expectRefusal(
      await call("POST", "/api/approvals", {
        body: { run: "r", step: "s", decision: "approve", reason: "because" },
      }),
      400,
      "request/invalid",
    );
    await expectRefusal(
      await call("POST", "/api/loops/query:none/renew", { body: {} }),
      400,
      "request/invalid",
    );
    await expectRefusal(
      await call("POST", "/api/loops/query:none/renew", {
        body: { extendMs: 1000, deadline: "2030-01-01T00:00:00Z" },
      }),
      400,
      "request/invalid",
    );
    await expectRefusal(
      await call("POST", "/api/loops/query:none/renew", { body: { extendMs: -5 } }),
      400,
      "request/invalid",
    );
    await expectRefusal(
      await call("POST", "/api/loops/query:none/renew", { body: { extendMs: 1000 } }),
      404,
      "loop/not-opened",
    );
    await expectRefusal(
      await call("POST", "/api/loops/query:none/cancel", { body: {} }),
      404,
      "loop/not-opened",
    );
    await expectRefusal(
      await call("POST", "/api/loops/query:none/answer", { body: { text: "yes" } }),
      404,
      "loop/not-opened",
    );
    await expectRefusal(
      await call("POST", "/api/loops/query:none/answer", { body: {} }),
      400,
      "request/invalid",
    );
  });

  it("lists a waiting approval, approves it as the CLI would, and follows the loop to succeeded", async () => {
    const cwd = mkdtempSync(path.join(dir, "run-"));
    const running = run(cwd);
    const [, query] = await running.waitFor(/opened (query:\S+)/);
    const [, proposal, step] = await running.waitFor(APPROVAL);

    const pending = (await (await call("GET", "/api/pending")).json()) as Record<string, unknown>[];
    const cli = JSON.parse((await runCli(["pending", "--json", "--store", store], { cwd })).stdout);
    expect(pending).toEqual(cli);
    expect(pending).toMatchObject([
      { query, run: proposal, step, kind: "mutation", path: "src/slugify.js" },
    ]);

    const loops = (await (await call("GET", "/api/loops")).json()) as Record<string, unknown>[];
    expect(loops).toEqual([
      {
        query,
        task: "fix-failing-test",
        state: "open",
        waiting: { reason: "approval", run: proposal, step, kind: "mutation" },
        spent: expect.objectContaining({ runs: expect.any(Number) }),
        limits: expect.objectContaining({ "max/passages": 12 }),
        deadline: expect.any(String),
        updatedAt: expect.any(String),
      },
    ]);
    expect(await (await call("GET", "/api/loops?waiting=approval")).json()).toHaveLength(1);
    expect(await (await call("GET", "/api/loops?waiting=answer")).json()).toEqual([]);
    expect(await (await call("GET", "/api/loops?state=stopped")).json()).toEqual([]);

    const view = (await (
      await call("GET", `/api/loops/${encodeURIComponent(query as string)}`)
    ).json()) as {
      loop: { schema: string; "query/id": string };
      records: { ref: string; kind: string }[];
      pending: unknown[];
    };
    expect(view.loop).toMatchObject({ schema: "corpus-task-pack-loop.v1", "query/id": query });
    expect(view.pending).toEqual(pending);
    const proposalRecord = view.records.find((r) => r.ref === proposal);
    expect(proposalRecord?.kind).toBe("proposal");
    const body = (await (
      await call("GET", `/api/records/${encodeURIComponent(proposal as string)}`)
    ).json()) as {
      candidate: { steps: { id: string }[] };
    };
    expect(body.candidate.steps.map((s) => s.id)).toContain(step);

    // What the approver needs: the task, what the implementer saw of earlier runs (the demo's
    // first plans fail), the checks to come, the budget and the deadline.
    const context = (await (
      await call(
        "GET",
        `/api/loops/${encodeURIComponent(query as string)}/approval?run=${encodeURIComponent(proposal as string)}`,
      )
    ).json()) as Record<string, unknown>;
    const exported = JSON.parse(
      (await runCli(["export", query as string, "--store", store], { cwd })).stdout,
    ) as { deadline: string; spent: { runs: number }; limits: { "max/experiments": number } };
    expect(context).toMatchObject({
      query,
      run: proposal,
      task: expect.stringContaining("slugify"),
      checks: expect.arrayContaining([
        { name: expect.any(String), description: expect.stringMatching(/^command \S+ exits 0$/) },
      ]),
      budget: expect.arrayContaining([
        {
          counter: "max/experiments",
          spent: exported.spent.runs,
          limit: exported.limits["max/experiments"],
          left: exported.limits["max/experiments"] - exported.spent.runs,
        },
      ]),
      deadline: exported.deadline,
      state: "open",
    });
    await expectRefusal(
      await call(
        "GET",
        `/api/loops/${encodeURIComponent(query as string)}/approval?run=corpus-experiment:sha256:none`,
      ),
      404,
      "loop/run-missing",
    );
    const seen = context.evidence as { kind: string; run: string; text: string }[];
    expect(seen.length).toBeGreaterThan(0);
    for (const e of seen) {
      expect(["check", "observation"]).toContain(e.kind);
      expect(e.run).not.toBe(proposal);
      expect(e.text).not.toBe("");
    }
    expect(context.packChanged).toBeUndefined();

    // The loop has no verified run yet: no diff to give.
    await expectRefusal(
      await call("GET", `/api/loops/${encodeURIComponent(query as string)}/diff`),
      409,
      "diff/not-verified",
    );

    const approve = { run: proposal, step, decision: "approve" };
    const ok = await call("POST", "/api/approvals", { body: approve, origin: ORIGIN });
    expect(ok.status).toBe(200);
    expect(await ok.json()).toMatchObject({ ok: true, result: "posted" });
    const again = await call("POST", "/api/approvals", { body: { ...approve, decision: "deny" } });
    await expectRefusal(again, 409, "hil/already-answered");

    const r = await running.done;
    expect(r.stdout).toContain("loop stopped: succeeded");
    expect(await (await call("GET", "/api/pending")).json()).toEqual([]);
    expect(await (await call("GET", "/api/loops?state=stopped")).json()).toMatchObject([
      { query, state: "stopped", stop: { reason: "succeeded" } },
    ]);
    const diff = (await (
      await call("GET", `/api/loops/${encodeURIComponent(query as string)}/diff`)
    ).json()) as {
      run: string;
      files: { path: string }[];
      diff: string;
    };
    expect(diff.files.map((f) => f.path)).toEqual(["src/slugify.js"]);
    expect(diff.diff).toContain("diff --git a/src/slugify.js b/src/slugify.js");

    // The stopped loop: the summarizer's Result, who approved each step (the shared token acts as
    // the runtime's operator).
    const stopped = (await (
      await call("GET", `/api/loops/${encodeURIComponent(query as string)}`)
    ).json()) as {
      result: { outcome: string; summary: string };
      decisions: { run: string; step: string; kind: string; operator: string }[];
      records: { ref: string; kind: string }[];
    };
    expect(stopped.result).toMatchObject({
      outcome: expect.any(String),
      summary: expect.any(String),
    });
    expect(stopped.decisions).toEqual([
      {
        run: proposal,
        step,
        kind: "approve",
        operator: expect.not.stringContaining("node-operator-binding:"),
        at: expect.any(String),
      },
    ]);
    // A changeset's view carries its diff; an execution's, its report and the acts on its run.
    const refOf = (kind: string) => stopped.records.findLast((x) => x.kind === kind)?.ref as string;
    const changeset = (await (
      await call("GET", `/api/records/${encodeURIComponent(refOf("changeset"))}/view`)
    ).json()) as { kind: string; diff: string };
    expect(changeset.kind).toBe("changeset");
    expect(changeset.diff).toBe(diff.diff);
    const execution = (await (
      await call("GET", `/api/records/${encodeURIComponent(refOf("execution"))}/view`)
    ).json()) as { report: { body: { checks: { name: string }[] } }; acts: { kind: string }[] };
    expect(execution.report.body.checks.length).toBeGreaterThan(0);
    expect(execution.acts).toMatchObject([{ kind: "approve", target: `${proposal} ${step}` }]);

    // Acts on a stopped loop are refused with the CLI's codes.
    await expectRefusal(
      await call("POST", "/api/approvals", { body: approve }),
      409,
      "loop/already-stopped",
    );
    await expectRefusal(
      await call("POST", `/api/loops/${encodeURIComponent(query as string)}/answer`, {
        body: { text: "x" },
      }),
      409,
      "loop/already-stopped",
    );
    const renew = await call("POST", `/api/loops/${encodeURIComponent(query as string)}/renew`, {
      body: { extendMs: 60_000 },
    });
    expect(renew.status).toBe(409);
  });

  it("denies with a reason: the act records it and the run concludes hil/denied", async () => {
    const cwd = mkdtempSync(path.join(dir, "deny-"));
    const running = run(cwd);
    const [, query] = await running.waitFor(/opened (query:\S+)/);
    const [, proposal, step] = await running.waitFor(APPROVAL);
    const denied = await call("POST", "/api/approvals", {
      body: { run: proposal, step, decision: "deny", reason: "not this way" },
      origin: ORIGIN,
    });
    expect(await denied.json()).toMatchObject({ ok: true, result: "posted" });
    const r = await running.done;
    expect(r.stdout).toContain("concluded refused (hil/denied)");
    expect(await warrant.store.readOperatorActs(query as string)).toMatchObject([
      { kind: "deny", target: `${proposal} ${step}`, text: "not this way" },
    ]);
    const cancel = await call("POST", `/api/loops/${encodeURIComponent(query as string)}/cancel`, {
      body: {},
      origin: ORIGIN,
    });
    expect(await cancel.json()).toMatchObject({ ok: true, result: "appended" });
  });

  it("streams every fact as an event with its position; Last-Event-ID resumes without loss", async () => {
    const all = await warrant.store.changeFeed?.().factsAfter(0, 10_000);
    expect(all?.length).toBeGreaterThan(10);
    const from0 = await readEvents(
      await call("GET", "/api/events", { headers: { "last-event-id": "0" } }),
      (evs) => evs.filter((e) => e.event === "fact").length >= (all?.length ?? 0),
    );
    const facts = from0.filter((e) => e.event === "fact");
    expect(facts.map((e) => Number(e.id))).toEqual(all?.map((f) => f.position));
    expect(JSON.parse(facts[0]?.data ?? "{}")).toMatchObject({
      position: all?.[0]?.position,
      query: all?.[0]?.query,
      sequence: 1,
      kind: "opened",
    });
    expect(from0.find((e) => e.event === "pending")?.data).toBe("[]");
    // Resume after the 7th fact: exactly the rest, in order.
    const seventh = facts[6]?.id as string;
    const resumed = await readEvents(
      await call("GET", "/api/events", { headers: { "last-event-id": seventh } }),
      (evs) => evs.filter((e) => e.event === "fact").length >= facts.length - 7,
    );
    expect(resumed.filter((e) => e.event === "fact").map((e) => e.id)).toEqual(
      facts.slice(7).map((e) => e.id),
    );
    // Without Last-Event-ID the stream starts at the current position, and beats.
    const fresh = await readEvents(await call("GET", "/api/events"), (evs) =>
      evs.some((e) => e.comment === "heartbeat"),
    );
    expect(fresh[0]).toMatchObject({ event: "ready", id: String(all?.at(-1)?.position) });
    expect(fresh.filter((e) => e.event === "fact")).toEqual([]);
    await expectRefusal(
      await call("GET", "/api/events", { headers: { "last-event-id": "x1" } }),
      400,
      "request/invalid",
    );
  });

  it("tells a stream of facts and pending approvals as another process writes them", async () => {
    const head = await readEvents(await call("GET", "/api/events"), (evs) => evs.length > 0);
    const start = head[0]?.id as string;
    const cwd = mkdtempSync(path.join(dir, "live-"));
    const response = await call("GET", "/api/events", { headers: { "last-event-id": start } });
    const running = run(cwd);
    const [, proposal, step] = await running.waitFor(APPROVAL);
    const seen = await readEvents(response, (evs) =>
      evs.some((e) => e.event === "pending" && e.data.includes(step as string)),
    );
    const pending = JSON.parse(seen.filter((e) => e.event === "pending").at(-1)?.data ?? "[]");
    expect(pending).toMatchObject([{ run: proposal, step, kind: "mutation" }]);
    expect(seen.filter((e) => e.event === "fact").length).toBeGreaterThan(3);
    await call("POST", "/api/approvals", { body: { run: proposal, step, decision: "approve" } });
    expect((await running.done).stdout).toContain("loop stopped: succeeded");
  });

  it("serves the UI's files without the token, and nothing else", async () => {
    const ui = createConsoleHandler({ warrant, token: TOKEN, origins: [ORIGIN], hosts: [HOST] });
    const missing = await ui.fetch(new Request(`${ORIGIN}/etc/passwd`));
    expect(missing.status).toBe(404);
    const traversal = await ui.fetch(new Request(`${ORIGIN}/../package.json`));
    expect(traversal.status).toBe(404);
    const post = await ui.fetch(new Request(`${ORIGIN}/`, { method: "POST" }));
    expect(post.status).toBe(405);
    await ui.close();
  });
});

/** A request body that says whether anything ever pulled a byte of it. */
function watchedBody(bytes: number): { stream: ReadableStream<Uint8Array>; pulled: () => boolean } {
  let pulled = false;
  let left = bytes;
  const stream = new ReadableStream<Uint8Array>(
    {
      pull(controller) {
        pulled = true;
        if (left <= 0) return controller.close();
        const n = Math.min(left, 64 * 1024);
        left -= n;
        controller.enqueue(new Uint8Array(n).fill(0x20));
      },
    },
    { highWaterMark: 0 },
  );
  return { stream, pulled: () => pulled };
}

function expectFramingDenied(r: Response, what: string): void {
  expect(r.headers.get("x-frame-options"), what).toBe("DENY");
  const csp = r.headers.get("content-security-policy") ?? "";
  expect(
    csp.split(";").map((d) => d.trim()),
    what,
  ).toContain("frame-ancestors 'none'");
}

describe("the console's headers and request checks", () => {
  it("forbids framing on every response: page, asset, API JSON, refusals, event stream", async () => {
    const assets = mkdtempSync(path.join(dir, "assets-"));
    writeFileSync(path.join(assets, "index.html"), "<!doctype html><title>w</title>\n");
    writeFileSync(path.join(assets, "app.js"), "void 0;\n");
    writeFileSync(path.join(assets, "app.css"), "body{}\n");
    const ui = createConsoleHandler({
      warrant,
      token: TOKEN,
      origins: [ORIGIN],
      hosts: [HOST],
      assetsDir: assets,
    });
    const get = (p: string, init: RequestInit = {}) => ui.fetch(new Request(`${ORIGIN}${p}`, init));
    const auth = { authorization: `Bearer ${TOKEN}` };
    try {
      const page = await get("/");
      expect(page.status).toBe(200);
      expectFramingDenied(page, "the page");
      // The page's own policy is kept beside the framing directive.
      expect(page.headers.get("content-security-policy")).toContain("default-src 'self'");
      for (const p of ["/app.js", "/app.css"]) {
        const r = await get(p);
        expect(r.status).toBe(200);
        expectFramingDenied(r, p);
      }
      const loops = await get("/api/loops", { headers: auth });
      expect(loops.status).toBe(200);
      expectFramingDenied(loops, "API JSON");
      for (const [what, r, status] of [
        ["401", await get("/api/loops"), 401],
        ["404 route", await get("/api/nothing", { headers: auth }), 404],
        ["404 asset", await get("/nothing"), 404],
        ["405", await get("/", { method: "POST" }), 405],
        ["400", await get("/api/loops/%zz", { headers: auth }), 400],
        [
          "403 origin",
          await get("/api/loops/q/cancel", {
            method: "POST",
            headers: { ...auth, origin: "http://evil.example" },
          }),
          403,
        ],
        [
          "403 host",
          await ui.fetch(new Request("http://evil.example:7777/api/loops", { headers: auth })),
          403,
        ],
      ] as const) {
        expect(r.status, what).toBe(status);
        expectFramingDenied(r, what);
      }
      const events = await get("/api/events", { headers: auth });
      expect(events.headers.get("content-type")).toContain("text/event-stream");
      expectFramingDenied(events, "the event stream");
      await events.body?.cancel();
    } finally {
      await ui.close();
    }
  });

  it("answers only to its own Host: another name or port is 403 auth/foreign-host, token or not", async () => {
    const ok = await handler.fetch(
      new Request(`http://${HOST}/api/loops`, { headers: { authorization: `Bearer ${TOKEN}` } }),
    );
    expect(ok.status).toBe(200);
    for (const foreign of [
      "http://evil.example:7777/api/loops",
      "http://127.0.0.1.evil.example:7777/api/loops",
      "http://127.0.0.1:7778/api/loops",
      "http://localhost:7777/api/loops",
      "http://evil.example:7777/",
    ]) {
      const r = await handler.fetch(
        new Request(foreign, { headers: { authorization: `Bearer ${TOKEN}` } }),
      );
      await expectRefusal(r, 403, "auth/foreign-host");
    }
    // The names given are compared as a URL writes them: case does not matter.
    const named = createConsoleHandler({
      warrant,
      token: TOKEN,
      origins: [],
      hosts: ["Console.Example:8443"],
    });
    const r = await named.fetch(
      new Request("http://console.example:8443/api/loops", {
        headers: { authorization: `Bearer ${TOKEN}` },
      }),
    );
    expect(r.status).toBe(200);
    await named.close();
  });

  it("reads no byte of a body before the token and the origin are checked; a body over 1 MiB is 413", async () => {
    const post = (body: ReadableStream<Uint8Array>, headers: Record<string, string>) =>
      handler.fetch(
        new Request(`${ORIGIN}/api/approvals`, { method: "POST", headers, body, duplex: "half" }),
      );
    const big = 64 * 1024 * 1024;
    const noToken = watchedBody(big);
    await expectRefusal(await post(noToken.stream, {}), 401, "auth/token-required");
    expect(noToken.pulled()).toBe(false);
    const wrongToken = watchedBody(big);
    await expectRefusal(
      await post(wrongToken.stream, { authorization: "Bearer wrong-token-0123456789" }),
      401,
      "auth/token-required",
    );
    expect(wrongToken.pulled()).toBe(false);
    const foreign = watchedBody(big);
    await expectRefusal(
      await post(foreign.stream, {
        authorization: `Bearer ${TOKEN}`,
        origin: "http://evil.example",
      }),
      403,
      "auth/foreign-origin",
    );
    expect(foreign.pulled()).toBe(false);
    const foreignHost = watchedBody(big);
    const viaHost = await handler.fetch(
      new Request("http://evil.example:7777/api/approvals", {
        method: "POST",
        headers: { authorization: `Bearer ${TOKEN}` },
        body: foreignHost.stream,
        duplex: "half",
      }),
    );
    await expectRefusal(viaHost, 403, "auth/foreign-host");
    expect(foreignHost.pulled()).toBe(false);
    // With the token: a declared length past 1 MiB is refused before reading, a longer stream
    // once it passes 1 MiB; exactly 1 MiB is read (and then is not JSON).
    const declared = watchedBody(big);
    await expectRefusal(
      await post(declared.stream, {
        authorization: `Bearer ${TOKEN}`,
        "content-length": String(1024 * 1024 + 1),
      }),
      413,
      "request/too-large",
    );
    expect(declared.pulled()).toBe(false);
    const streamed = watchedBody(big);
    await expectRefusal(
      await post(streamed.stream, { authorization: `Bearer ${TOKEN}` }),
      413,
      "request/too-large",
    );
    expect(streamed.pulled()).toBe(true);
    const atLimit = watchedBody(1024 * 1024);
    await expectRefusal(
      await post(atLimit.stream, { authorization: `Bearer ${TOKEN}` }),
      400,
      "request/invalid",
    );
    const overByOne = watchedBody(1024 * 1024 + 1);
    await expectRefusal(
      await post(overByOne.stream, { authorization: `Bearer ${TOKEN}` }),
      413,
      "request/too-large",
    );
  });

  it("with operators' tokens: each token acts as its operator, the shared token is not one, a bad name or no token refuses the handler", async () => {
    const people = createConsoleHandler({
      warrant,
      operators: [
        { name: "alice", token: "alice-token-0123456789" },
        { name: "bob", token: "bob-token-0123456789" },
      ],
      origins: [ORIGIN],
      hosts: [HOST],
    });
    const as = (token: string) =>
      people.fetch(
        new Request(`${ORIGIN}/api/session`, { headers: { authorization: `Bearer ${token}` } }),
      );
    expect(await (await as("alice-token-0123456789")).json()).toEqual({ operator: "alice" });
    expect(await (await as("bob-token-0123456789")).json()).toEqual({ operator: "bob" });
    await expectRefusal(await as(TOKEN), 401, "auth/token-required");
    await expectRefusal(await as("alice-token-012345678"), 401, "auth/token-required");
    // The shared token's session names nobody.
    expect(await (await call("GET", "/api/session")).json()).toEqual({ operator: null });
    // An act is recorded as the token's operator: a renewal of a loop alice did not open is refused
    // as another operator's.
    const cwd = mkdtempSync(path.join(dir, "people-"));
    const running = run(cwd);
    const [, query] = await running.waitFor(/opened (query:\S+)/);
    await running.waitFor(APPROVAL);
    const cancel = await people.fetch(
      new Request(`${ORIGIN}/api/loops/${encodeURIComponent(query as string)}/cancel`, {
        method: "POST",
        headers: {
          authorization: "Bearer alice-token-0123456789",
          "content-type": "application/json",
        },
        body: "{}",
      }),
    );
    await expectRefusal(cancel, 409, "loop/not-operator");
    expect(await runCli(["cancel", query as string, "--store", store], { cwd })).toMatchObject({
      code: 0,
    });
    await running.done;
    await people.close();
    expect(() =>
      createConsoleHandler({
        warrant,
        operators: [{ name: "a b", token: "x".repeat(20) }],
        origins: [ORIGIN],
        hosts: [HOST],
      }),
    ).toThrow(expect.objectContaining({ code: "operator/name-invalid" }));
    expect(() => createConsoleHandler({ warrant, origins: [ORIGIN], hosts: [HOST] })).toThrow(
      expect.objectContaining({ code: "server/no-token" }),
    );
  });

  it("takes the Bearer scheme in any case, and nothing but the scheme and the token", async () => {
    for (const scheme of ["bearer", "BEARER", "bEaReR"]) {
      const r = await call("GET", "/api/loops", {
        token: null,
        headers: { authorization: `${scheme} ${TOKEN}` },
      });
      expect(r.status, scheme).toBe(200);
    }
    for (const auth of [`Bearer${TOKEN}`, `Bearer ${TOKEN} extra`, `Token ${TOKEN}`, TOKEN]) {
      const r = await call("GET", "/api/loops", { token: null, headers: { authorization: auth } });
      await expectRefusal(r, 401, "auth/token-required");
    }
  });

  it("answers a malformed %-escape in a path with 400 request/bad-escape, not 500", async () => {
    for (const p of [
      "/api/loops/%zz",
      "/api/loops/query%3Ax%E0%A4%A",
      "/api/records/%",
      "/api/loops/%C3%28/diff",
    ]) {
      const r = await call("GET", p);
      await expectRefusal(r, 400, "request/bad-escape");
    }
    // A well-formed escape is decoded: the loop is looked up by its decoded name.
    await expectRefusal(await call("GET", "/api/loops/query%3Anone"), 404, "loop/not-opened");
  });

  it("refuses a state-changing request from an origin that only starts like its own (403)", async () => {
    for (const origin of [
      `${ORIGIN}.evil.example`,
      `${ORIGIN}0`,
      `${ORIGIN}/`,
      `${ORIGIN}@evil.example`,
      "http://127.0.0.1",
      "https://127.0.0.1:7777",
      "null",
    ]) {
      const r = await call("POST", "/api/loops/query:none/cancel", { body: {}, origin });
      await expectRefusal(r, 403, "auth/foreign-origin");
    }
    // Its own origin reaches the route.
    const own = await call("POST", "/api/loops/query:none/cancel", { body: {}, origin: ORIGIN });
    await expectRefusal(own, 404, "loop/not-opened");
  });
});
