// Every error and refusal code Warrant gives (`namespace/name`), what it means, and how it surfaces:
// the exit status a command gives when it fails with it, and the HTTP status the console's API
// answers it with. `isWarrantError`, the command line's exit statuses, the console's statuses and
// docs/errors.md (`npm run build:errors-doc`) are read from here; test/codes.test.ts fails when a
// code literal in src/ is missing from this list, or an entry here is used nowhere.

/** Where a namespace's codes come from: a contract names them, or the host gives them. */
export type CodeNamespaceKind = "contract" | "host";

/** A namespace: its kind and what its codes are about (a heading of docs/errors.md). */
export interface CodeNamespaceSpec {
  readonly kind: CodeNamespaceKind;
  readonly about: string;
}

/**
 * The namespaces, in the order docs/errors.md lists them. `contract`: codes the contracts name
 * (they may appear in records and loop documents); `host`: the host's own (its stores, models,
 * tools, sandboxes, runtime, operators, console).
 */
export const CODE_NAMESPACES = {
  definition: { kind: "contract", about: "agent definitions: their JSON, schema and rules" },
  cid: { kind: "contract", about: "content IDs and collections of files" },
  turn: { kind: "contract", about: "a model's turn: its shape, tool calls and message" },
  loop: { kind: "contract", about: "the loop: its document, facts, limits and operator acts" },
  taskpack: { kind: "contract", about: "task packs: their schema, commands, checks and files" },
  plan: { kind: "contract", about: "an implementer's plan of steps" },
  passage: { kind: "contract", about: "one agent's passage: its limits and end" },
  hil: { kind: "contract", about: "a human in the loop: approvals, denials and run refs" },
  run: { kind: "contract", about: "a run of a plan" },
  verifier: { kind: "contract", about: "the verifier of a run" },
  environment: { kind: "contract", about: "the contained environment a run changes" },
  workbench: { kind: "contract", about: "the workbench a run's steps act on" },
  rollback: { kind: "contract", about: "undoing a run's environment" },
  interface: { kind: "contract", about: "the interface that drives a loop" },
  package: { kind: "contract", about: "an operator task package" },
  "local-binding": { kind: "contract", about: "the local binding of a package" },
  deliberation: { kind: "contract", about: "the deliberation flow" },
  capability: { kind: "contract", about: "capabilities granted to a task" },
  publication: { kind: "contract", about: "publishing a result" },
  offer: { kind: "contract", about: "offers of a package" },
  store: { kind: "host", about: "ledger stores: URIs, files, rows, chains and leases" },
  model: { kind: "host", about: "models: URIs, keys, providers and scripted models" },
  tool: { kind: "host", about: "tools: workspace tools, MCP servers and the tool registry" },
  skill: { kind: "host", about: "agent skills read from files" },
  memory: { kind: "host", about: "an agent's writable memory" },
  sandbox: { kind: "host", about: "sandboxes: detection, environments, files and host commands" },
  runtime: { kind: "host", about: "the runtime that drives loops" },
  records: { kind: "host", about: "records: their bodies, signatures and audit" },
  id: { kind: "host", about: "identifiers (query IDs and the like)" },
  diff: { kind: "host", about: "`warrant diff`: the change of a loop's verified run" },
  apply: { kind: "host", about: "`warrant apply`: taking a run's change into a folder or git" },
  operator: { kind: "host", about: "operators: names and token files" },
  internal: { kind: "host", about: "a fault in Warrant itself" },
  queue: { kind: "host", about: "the job queue and its workers" },
  egress: { kind: "host", about: "the egress proxy of a contained run (reasons in its log)" },
  record: { kind: "host", about: "reading one record by its ref" },
  request: { kind: "host", about: "an HTTP request to the console" },
  auth: { kind: "host", about: "the console's bearer token, Host and Origin checks" },
  server: { kind: "host", about: "the console server" },
  api: { kind: "host", about: "the console's API routes" },
  audit: { kind: "host", about: "`warrant loop check --store`: auditing a stored loop" },
  bundle: { kind: "host", about: "exported loop bundles" },
  changeset: { kind: "host", about: "the changeset a run keeps" },
  patch: { kind: "host", about: "patches applied by a plan's steps" },
  preflight: { kind: "host", about: "the checks before a loop opens" },
  input: { kind: "host", about: "input files a command reads" },
  path: { kind: "host", about: "relative paths in packs and plans" },
  eval: { kind: "host", about: "eval sets: loading, running, reporting and certifying" },
} as const satisfies Record<string, CodeNamespaceSpec>;

export type CodeNamespace = keyof typeof CODE_NAMESPACES;

/** The command line's exit statuses a code gives: 1 invalid or refused, 2 usage. */
export type CodeExit = 1 | 2;

/** One code: what went wrong and what to do, and how it surfaces. */
export interface CodeSpec {
  /** One line: what went wrong, and what to do about it. */
  readonly meaning: string;
  /** The exit status of a command that fails with it; absent where it never reaches the CLI. */
  readonly exit?: CodeExit;
  /** The console API's status for it; absent where the console never answers with it. */
  readonly http?: number;
  /** The contract that names the code (a refusal a record or a loop document can carry). */
  readonly contract?: "operator-task-common.v1";
  /** Named by its contract for hosts that have the concept; this host does not give it yet. */
  readonly reserved?: true;
}

const OTC = "operator-task-common.v1";

/** Every code, by namespace then name. */
export const CODES = {
  // definition
  "definition/ambiguous-array": {
    meaning: "a field written as an array is ambiguous: write it as an object",
    exit: 1,
  },
  "definition/base-url-missing": {
    meaning:
      "an openai-compatible model has no base URL: set WARRANT_OPENAI_COMPATIBLE_BASE_URL or the pack's openaiCompatibleBaseUrl",
    exit: 1,
  },
  "definition/betas-order": {
    meaning: "the model's betas repeat or are not sorted ascending: sort them",
    exit: 1,
  },
  "definition/blank": { meaning: "a required text is empty or only spaces: write it", exit: 1 },
  "definition/cid": { meaning: "a CID in the definition is malformed: recompute it", exit: 1 },
  "definition/credential": {
    meaning: "a URL carries a user name, password or query: move the credential to the environment",
    exit: 1,
  },
  "definition/depth": { meaning: "sub-agents nest deeper than allowed: flatten them", exit: 1 },
  "definition/duplicate-key": {
    meaning: "a JSON object repeats a key: keep one",
    exit: 1,
  },
  "definition/duplicate-model": { meaning: "two models share a name: rename one", exit: 1 },
  "definition/duplicate-name": { meaning: "two entries share a name: rename one", exit: 1 },
  "definition/files-unavailable": {
    meaning: "the definition's skill or memory files cannot be read here: give their folder",
    exit: 1,
  },
  "definition/graph-edge": {
    meaning: "a graph edge names no node of the definition: fix the edge",
    exit: 1,
  },
  "definition/input-schema": {
    meaning: "an input schema is not a JSON Schema Warrant takes: fix the schema",
    exit: 1,
  },
  "definition/invalid": { meaning: "the agent definition was refused: see its problems", exit: 1 },
  "definition/json": { meaning: "the file is not UTF-8 JSON: fix its syntax", exit: 1 },
  "definition/lone-surrogate": {
    meaning: "a string holds a lone UTF-16 surrogate: write valid Unicode",
    exit: 1,
  },
  "definition/mcp-transport": {
    meaning: "an MCP server names no usable transport (a command or a URL): give one",
    exit: 1,
  },
  "definition/memory-cid": {
    meaning:
      "writable memory has a scope and no cid, read-only memory a cid and no scope: fix the entry",
    exit: 1,
  },
  "definition/memory-cid-mismatch": {
    meaning: "read-only memory's files do not hash to its cid: update the cid or the files",
    exit: 1,
  },
  "definition/memory-missing": { meaning: "read-only memory's file is missing: add it", exit: 1 },
  "definition/memory-namespace-missing": {
    meaning: "writable memory needs the loop's memory namespace: open the loop with one",
    exit: 1,
  },
  "definition/memory-not-text": { meaning: "a memory file is not UTF-8 text", exit: 1 },
  "definition/memory-path": {
    meaning: "a memory path is not a relative path inside the definition's folder",
    exit: 1,
  },
  "definition/memory-source-hash": {
    meaning: "writable memory's scope has a malformed source hash: fix it",
    exit: 1,
  },
  "definition/memory-too-large": { meaning: "a memory file is over its size limit", exit: 1 },
  "definition/middleware-config": {
    meaning: "a middleware's config is invalid: fix it as its message says",
    exit: 1,
  },
  "definition/middleware-unsupported": {
    meaning: "the definition names a middleware Warrant does not run: remove it",
    exit: 1,
  },
  "definition/model": {
    meaning: "a definition's model cannot be made: fix its provider, URL or key",
    exit: 1,
  },
  "definition/model-ref": { meaning: "a model reference names no model: fix the name", exit: 1 },
  "definition/model-script-missing": {
    meaning: "a scripted model's script file is missing: add it or fix the path",
    exit: 1,
  },
  "definition/prompt-source": {
    meaning: "a prompt has exactly one of content and contentCid: give one",
    exit: 1,
  },
  "definition/provider-unknown": {
    meaning:
      "the provider is not one Warrant runs (openai, anthropic, openai-compatible, scripted)",
    exit: 1,
  },
  "definition/safe-integer": {
    meaning: "a number is not a safe integer: use one between -(2^53-1) and 2^53-1",
    exit: 1,
  },
  "definition/schema": {
    meaning: "the definition does not match its JSON Schema: fix the field named",
    exit: 1,
  },
  "definition/setting-unhonoured": {
    meaning:
      "a model setting is not sent to its provider (a warning): remove it or change provider",
    exit: 1,
  },
  "definition/setting-weakens": {
    meaning:
      "with thinking on, a tool call cannot be forced (a warning): turns use tool_choice auto",
    exit: 1,
  },
  "definition/skill-cid-mismatch": {
    meaning: "a skill's files do not hash to its cid: update the cid or the files",
    exit: 1,
  },
  "definition/skill-missing": { meaning: "a named skill is not there: add it", exit: 1 },
  "definition/skill-name": { meaning: "a skill's name is not a folder name: rename it", exit: 1 },
  "definition/thinking": {
    meaning:
      "the thinking setting is not enabled, disabled or adaptive, or its budget does not fit the type",
    exit: 1,
  },
  "definition/too-long": { meaning: "a text is longer than allowed: shorten it", exit: 1 },
  "definition/tool-schema-wider": {
    meaning: "a declared tool's input schema accepts more than the bound tool: narrow it",
    exit: 1,
  },
  "definition/tool-unbound": {
    meaning: "a declared tool is bound to no tool the host has: bind it or remove it",
    exit: 1,
  },
  "definition/unsafe-integer": {
    meaning: "a number in the JSON is beyond the safe integer range: make it smaller",
    exit: 1,
  },
  "definition/url": { meaning: "a URL does not parse: fix it", exit: 1 },
  // cid
  "cid/duplicate-name": { meaning: "two entries of a collection have one name", exit: 1 },
  "cid/hash-length": { meaning: "a hash is not 32 bytes (a fault in the caller)", exit: 1 },
  "cid/invalid": { meaning: "the text is not a CID Warrant reads: recompute it", exit: 1 },
  "cid/leb128": { meaning: "a number cannot be encoded as unsigned LEB128", exit: 1 },
  // turn
  "turn/arguments-invalid": {
    meaning: "a tool call's arguments do not match the tool's input schema",
    exit: 1,
  },
  "turn/arguments-not-object": {
    meaning: "a tool call's arguments are not a JSON object",
    exit: 1,
  },
  "turn/json": { meaning: "the turn is not UTF-8 JSON", exit: 1 },
  "turn/kind-mismatch": {
    meaning: "the turn mixes tool calls and a message: a turn is one or the other",
    exit: 1,
  },
  "turn/paper-ref-unresolved": { meaning: "the message's paper_ref names nothing known", exit: 1 },
  "turn/payload-invalid": {
    meaning: "the message's payload does not match its type's schema",
    exit: 1,
  },
  "turn/refusal": { meaning: "the model refused to answer: see its reason", exit: 1 },
  "turn/schema": { meaning: "the turn does not match the model-turn schema", exit: 1 },
  "turn/truncated": {
    meaning: "the model's answer was cut at its output token limit: raise the limit",
    exit: 1,
  },
  "turn/type-not-allowed": { meaning: "the role may not send a message of this type", exit: 1 },
  "turn/unknown-tool": { meaning: "a tool call names a tool the role does not have", exit: 1 },
  // loop
  "loop/already-concluded": {
    meaning: "the run was already concluded differently: that conclusion stands",
    exit: 1,
    http: 409,
  },
  "loop/already-stopped": {
    meaning: "the loop has stopped: nothing waits for this act",
    exit: 1,
    http: 409,
  },
  "loop/budget-exhausted": {
    meaning: "a budget counter is spent: the loop stops; run again with larger limits",
    exit: 1,
  },
  "loop/command-invalid": {
    meaning: "a loop command carries an invalid value: fix the value",
    exit: 1,
    http: 400,
  },
  "loop/cycle-missing": { meaning: "no cycle was opened for the proposal named", exit: 1 },
  "loop/deadline-passed": {
    meaning: "the loop's deadline has passed: renew it with `warrant renew`",
    exit: 1,
    http: 409,
  },
  "loop/duplicate-fact": { meaning: "the loop document repeats a fact", exit: 1 },
  "loop/fact-mismatch": {
    meaning: "a fact differs from what the loop's rules decide at its place",
    exit: 1,
  },
  "loop/json": { meaning: "the loop document is not UTF-8 JSON", exit: 1 },
  "loop/key-conflict": {
    meaning: "the loop is already opened with another binding, operator or limits",
    exit: 1,
  },
  "loop/limits-invalid": {
    meaning: "a layer of limits states an unknown or invalid limit: fix the pack's limits",
    exit: 1,
  },
  "loop/not-open": { meaning: "the loop is stopped: the act is refused", exit: 1, http: 409 },
  "loop/not-opened": {
    meaning: "no loop with that query ID is in the store: check the ID and --store",
    exit: 1,
    http: 404,
  },
  "loop/not-operator": {
    meaning: "only the loop's own operator may renew or cancel it",
    exit: 1,
    http: 409,
  },
  "loop/projection-mismatch": {
    meaning: "the loop document's state is not the one its facts give",
    exit: 1,
  },
  "loop/query-mismatch": { meaning: "a command names another loop than the one executed", exit: 1 },
  "loop/recorded-at": { meaning: "a fact's recorded-at is not an RFC 3339 UTC time", exit: 1 },
  "loop/renewal-invalid": {
    meaning: "the new deadline is not a time, or not later than the current one",
    exit: 1,
    http: 400,
  },
  "loop/renewals-exhausted": {
    meaning: "the loop was renewed as often as allowed",
    exit: 1,
    http: 409,
  },
  "loop/run-missing": {
    meaning: "the loop has no such run: check the run ref",
    exit: 1,
    http: 404,
  },
  "loop/schema": { meaning: "the loop document does not match its contract", exit: 1 },
  "loop/script-invalid": { meaning: "the loop script does not match its format", exit: 1 },
  "loop/sequence-gap": { meaning: "fact sequences are not contiguous from 1", exit: 1 },
  "loop/stop-mismatch": {
    meaning: "the loop document's stop is not the one its facts give",
    exit: 1,
  },
  // taskpack
  "taskpack/agent-missing": { meaning: "the pack names an agent file that is missing", exit: 1 },
  "taskpack/args-not-object": { meaning: "an argument schema is not type: object", exit: 1 },
  "taskpack/args-schema": {
    meaning: "an argument schema is not a JSON Schema Warrant takes",
    exit: 1,
  },
  "taskpack/check-args-invalid": {
    meaning: "a check's arguments do not match its command's argument schema",
    exit: 1,
  },
  "taskpack/check-not-observation": {
    meaning: "a check runs a command that is not an observation: checks only observe",
    exit: 1,
  },
  "taskpack/dependency-invalid": { meaning: "a dependency entry is not a valid path", exit: 1 },
  "taskpack/dependency-missing": { meaning: "a dependency's folder is missing", exit: 1 },
  "taskpack/dependency-not-folder": { meaning: "a dependency is not a folder", exit: 1 },
  "taskpack/dependency-outside": {
    meaning: "a dependency lies outside the workspace or is reached through a link",
    exit: 1,
  },
  "taskpack/dependency-overlap": { meaning: "two dependencies overlap: keep one", exit: 1 },
  "taskpack/duplicate-check": { meaning: "two checks share a name: rename one", exit: 1 },
  "taskpack/env-reserved": {
    meaning: "the pack sets an environment variable the environment owns (HOME)",
    exit: 1,
  },
  "taskpack/env-secret": {
    meaning:
      "a command's environment names what looks like a credential: a pack never carries secrets",
    exit: 1,
  },
  "taskpack/glob-invalid": { meaning: "a glob pattern is malformed", exit: 1 },
  "taskpack/guidance-without-agent": {
    meaning: "the pack gives guidance to a role that has no agent",
    exit: 1,
  },
  "taskpack/invalid": { meaning: "the task pack was refused: see its problems", exit: 1 },
  "taskpack/json": { meaning: "the task pack is not JSON", exit: 1 },
  "taskpack/network-duplicate": { meaning: "a network entry repeats", exit: 1 },
  "taskpack/network-entry": {
    meaning: "a network entry is not host:port ([address]:port for IPv6)",
    exit: 1,
  },
  "taskpack/network-host": {
    meaning: "a network host is not a DNS name or an IP address",
    exit: 1,
  },
  "taskpack/network-port": { meaning: "a network port is not 1-65535", exit: 1 },
  "taskpack/placeholder-type": {
    meaning: "an argv placeholder's argument has the wrong type",
    exit: 1,
  },
  "taskpack/placeholder-unknown": { meaning: "an argv placeholder names no argument", exit: 1 },
  "taskpack/read": { meaning: "the task pack file cannot be read", exit: 1 },
  "taskpack/schema": { meaning: "the task pack does not match its schema", exit: 1 },
  "taskpack/toolchain-forbidden": {
    meaning:
      "a toolchain may not be bound into the sandbox (a system or home folder, the workspace, the temp folder)",
    exit: 1,
  },
  "taskpack/toolchain-missing": { meaning: "a toolchain folder is missing", exit: 1 },
  "taskpack/toolchain-overlap": { meaning: "two toolchains overlap: keep one", exit: 1 },
  "taskpack/toolchain-path": {
    meaning: "a toolchain is not an absolute path in normal form (no .., ., // or trailing /)",
    exit: 1,
  },
  "taskpack/unknown-command": { meaning: "a check or step names no command of the pack", exit: 1 },
  "taskpack/workspace-missing": { meaning: "the pack's workspace folder is missing", exit: 1 },
  // plan
  "plan/changed-replay": {
    meaning: "a replayed plan differs from the one recorded",
    contract: OTC,
  },
  "plan/duplicate-step-id": { meaning: "two steps of the plan share an id", exit: 1 },
  "plan/first-step-not-observation": {
    meaning: "the plan's first step is not an observation",
    contract: OTC,
  },
  "plan/outside-profile": {
    meaning: "a step is outside the pack's command profile: the plan is refused",
    exit: 1,
    contract: OTC,
  },
  "plan/recovery-class-not-admitted": {
    meaning: "a step's recovery class is not admitted",
    contract: OTC,
    reserved: true,
  },
  "plan/unknown-action-kind": {
    meaning: "a step names an action kind Warrant does not know",
    exit: 1,
    contract: OTC,
  },
  // passage
  "passage/call-limit": {
    meaning: "the passage reached its call-limit middleware's number of model calls",
    exit: 1,
  },
  "passage/cancelled": { meaning: "the passage was cancelled", exit: 1 },
  "passage/max-tokens": {
    meaning: "the passage used its tokens without a message: raise the limit or simplify",
    exit: 1,
  },
  "passage/max-turns": {
    meaning: "the passage reached its limit of model calls without a message",
    exit: 1,
  },
  // hil
  "hil/already-answered": {
    meaning: "the step was already approved or denied: the first act counts",
    exit: 1,
    http: 409,
  },
  "hil/ambiguous-ref": {
    meaning: "the run prefix names several runs: give more of the ref",
    exit: 2,
    http: 400,
  },
  "hil/attention-unavailable": {
    meaning: "no human attention is available",
    contract: OTC,
    reserved: true,
  },
  "hil/denied": { meaning: "an operator denied the step", contract: OTC },
  "hil/expired": { meaning: "the approval request expired", contract: OTC },
  "hil/ref-invalid": { meaning: "the run ref is malformed", exit: 2, http: 400 },
  "hil/ref-too-short": {
    meaning: "a run prefix needs at least 8 characters",
    exit: 2,
    http: 400,
  },
  // run
  "run/budget-exhausted": { meaning: "the run spent its budget", contract: OTC },
  "run/cancelled": { meaning: "the run was cancelled", contract: OTC, reserved: true },
  // verifier
  "verifier/check-missing": { meaning: "a check the verifier needs is missing", contract: OTC },
  "verifier/effect-mode-missing": {
    meaning: "the verifier has no effect mode",
    contract: OTC,
    reserved: true,
  },
  "verifier/mutation-not-admitted": {
    meaning: "a mutation ran without admission: the run is refused for safety",
    contract: OTC,
  },
  "verifier/timeout": { meaning: "the verifier timed out", contract: OTC },
  "verifier/unavailable": { meaning: "no verifier is available", contract: OTC, reserved: true },
  // environment
  "environment/findings-dropped": {
    meaning: "more findings than are kept: the rest were dropped",
    exit: 1,
  },
  "environment/image-mismatch": {
    meaning: "the environment's image is not the one bound",
    contract: OTC,
    reserved: true,
  },
  "environment/impact-class-exceeded": {
    meaning: "the run's impact goes beyond its admitted class: refused for safety",
    contract: OTC,
  },
  "environment/limit": {
    meaning: "a command's output reached its size limit and was stopped there",
    exit: 1,
  },
  "environment/name-not-utf8": { meaning: "a file name in the change is not UTF-8", exit: 1 },
  "environment/not-contained": {
    meaning: "no sandbox works on this host: install bubblewrap or allow user namespaces",
    exit: 1,
    contract: OTC,
  },
  "environment/prepared-system-unavailable": {
    meaning: "the prepared system is not available",
    contract: OTC,
    reserved: true,
  },
  "environment/runtime-egress-denied": {
    meaning: "the run reached for the network beyond its policy: refused for safety",
    contract: OTC,
  },
  "environment/special-file": {
    meaning: "the change holds a device, socket or FIFO: it is never opened",
    exit: 1,
  },
  "environment/too-deep": {
    meaning: "the changed tree goes deeper than the walk follows",
    exit: 1,
  },
  "environment/too-many-changes": {
    meaning: "the change is larger than the walk takes, or the walk ran out of time",
    exit: 1,
  },
  // workbench
  "workbench/command-profile-missing": {
    meaning: "the workbench has no command profile",
    contract: OTC,
    reserved: true,
  },
  "workbench/effect-mode-missing": {
    meaning: "the workbench has no effect mode",
    contract: OTC,
    reserved: true,
  },
  "workbench/patch-outside-policy": {
    meaning: "a step writes outside the paths the pack allows: refused for safety",
    exit: 1,
    contract: OTC,
  },
  // rollback
  "rollback/destroy-unconfirmed": {
    meaning: "the environment's destruction was not confirmed",
    contract: OTC,
  },
  "rollback/unavailable": { meaning: "no rollback is available", contract: OTC, reserved: true },
  // interface
  "interface/grant-missing": {
    meaning: "the interface holds no grant",
    contract: OTC,
    reserved: true,
  },
  "interface/lease-lost": {
    meaning: "another process drives the loop: wait for it, or resume when its lease ends",
    exit: 1,
    contract: OTC,
  },
  // contract-only namespaces
  "package/conformance-missing": {
    meaning: "the package has no conformance record",
    contract: OTC,
    reserved: true,
  },
  "package/generation-stale": {
    meaning: "the package's generation is stale",
    contract: OTC,
    reserved: true,
  },
  "package/not-active": { meaning: "the package is not active", contract: OTC, reserved: true },
  "package/profile-digest-mismatch": {
    meaning: "the package's profile digest differs",
    contract: OTC,
    reserved: true,
  },
  "local-binding/conflict": {
    meaning: "the local binding conflicts with another",
    contract: OTC,
    reserved: true,
  },
  "local-binding/incomplete": {
    meaning: "no layer of limits states a limit the loop needs: state it in the pack",
    exit: 1,
    contract: OTC,
  },
  "local-binding/missing": { meaning: "there is no local binding", contract: OTC, reserved: true },
  "local-binding/outside-package-ceiling": {
    meaning: "a limit is above the ceiling an outer layer sets: lower it",
    exit: 1,
    contract: OTC,
  },
  "local-binding/paused": { meaning: "the local binding is paused", contract: OTC, reserved: true },
  "local-binding/profile-changed": {
    meaning: "the binding's profile changed",
    contract: OTC,
    reserved: true,
  },
  "local-binding/revision-stale": {
    meaning: "the binding's revision is stale",
    contract: OTC,
    reserved: true,
  },
  "deliberation/flow-unavailable": {
    meaning: "the deliberation flow is not available",
    contract: OTC,
    reserved: true,
  },
  "capability/missing": {
    meaning: "a capability the task needs is not granted",
    contract: OTC,
    reserved: true,
  },
  "capability/revoked": { meaning: "a capability was revoked", contract: OTC, reserved: true },
  "publication/disabled": { meaning: "publication is disabled", contract: OTC, reserved: true },
  "publication/policy-missing": {
    meaning: "there is no publication policy",
    contract: OTC,
    reserved: true,
  },
  "offer/withdrawal-pending": {
    meaning: "the offer's withdrawal is pending",
    contract: OTC,
    reserved: true,
  },
  // store
  "store/batch-invalid": {
    meaning: "a batch of writes is malformed (a fault in the caller)",
    exit: 1,
  },
  "store/busy": { meaning: "another process held the store's lock too long: try again", exit: 1 },
  "store/chain-broken": { meaning: "a fact's hash does not chain to the one before", exit: 1 },
  "store/charge-key-mismatch": { meaning: "a charge's key is not the one its fact gives", exit: 1 },
  "store/contention": {
    meaning: "PostgreSQL refused a write under contention: try again",
    exit: 1,
  },
  "store/folder-missing": {
    meaning: "the SQLite file's folder does not exist: create it or use another path",
    exit: 1,
  },
  "store/head-mismatch": {
    meaning: "the chain was rewritten after a signed head: the store was tampered with",
    exit: 1,
  },
  "store/io": { meaning: "the store's folder or file cannot be created or read", exit: 1 },
  "store/kind-mismatch": { meaning: "a stored fact's kind is not its step's", exit: 1 },
  "store/lease-lost": {
    meaning: "a write under an old lease was refused: another process drives the loop",
    exit: 1,
  },
  "store/no-change-feed": {
    meaning: "the store keeps no change feed (memory:): use SQLite or PostgreSQL",
    exit: 1,
    http: 404,
  },
  "store/not-found": { meaning: "no ledger at that URI: check --store or WARRANT_STORE", exit: 1 },
  "store/record-conflict": {
    meaning: "a record is already stored with another kind, query or body",
    exit: 1,
  },
  "store/record-mismatch": {
    meaning: "a record's content does not reproduce its ref: it was edited",
    exit: 1,
  },
  "store/record-missing": { meaning: "a fact names a record the store does not hold", exit: 1 },
  "store/row-invalid": { meaning: "a stored fact row is not a fact in JSON", exit: 1 },
  "store/row-mismatch": { meaning: "a fact row's number is not the fact's", exit: 1 },
  "store/sequence-gap": { meaning: "stored facts skip a sequence number", exit: 1 },
  "store/truncated": {
    meaning: "facts a signed head covers are missing: the store was truncated",
    exit: 1,
  },
  "store/unreachable": {
    meaning: "PostgreSQL cannot be reached: check the URI and that the server runs",
    exit: 1,
  },
  "store/unreadable": { meaning: "the file is not a readable SQLite ledger", exit: 1 },
  "store/uri-invalid": {
    meaning: "the store URI names no store: use sqlite:PATH, postgres://… or memory:",
    exit: 2,
  },
  "store/version-invalid": {
    meaning: "the store records a schema version that is not a number",
    exit: 1,
  },
  "store/version-too-new": {
    meaning: "a newer Warrant wrote the store: upgrade this one",
    exit: 1,
  },
  // model
  "model/aborted": { meaning: "the model call was cancelled", exit: 1 },
  "model/auth": { meaning: "the provider refused the key (401/403): check the API key", exit: 1 },
  "model/bad-request": {
    meaning: "the provider refused the request (400/404/422): check the model name",
    exit: 1,
  },
  "model/credential": {
    meaning: "the model's base URL carries a user name or query: remove it",
    exit: 2,
  },
  "model/failed": { meaning: "the model call failed: see the provider's message", exit: 1 },
  "model/http-error": { meaning: "the provider answered with an unexpected HTTP status", exit: 1 },
  "model/invalid": { meaning: "a role's model is neither a function nor a provider", exit: 1 },
  "model/missing": { meaning: "a role has no model: pass --model ROLE=URI", exit: 2 },
  "model/missing-key": {
    meaning: "the provider's API key is not in the environment: set it",
    exit: 2,
  },
  "model/rate-limited": {
    meaning: "the provider rate-limited the call (429): wait and resume",
    exit: 1,
  },
  "model/script": { meaning: "a scripted model's file cannot be read or parsed", exit: 1 },
  "model/script-exhausted": {
    meaning: "the scripted model has no answer left: add answers to its script",
    exit: 1,
  },
  "model/script-invalid": {
    meaning: "a line of a scripted model's file is not a valid turn",
    exit: 1,
  },
  "model/specification-version": {
    meaning: "the model speaks another specification version than this library",
    exit: 1,
  },
  "model/timeout": { meaning: "the model call timed out: try again or raise the timeout", exit: 1 },
  "model/unavailable": { meaning: "the provider is unavailable (5xx): try again later", exit: 1 },
  "model/unreachable": { meaning: "the model's server cannot be reached: check the URL", exit: 1 },
  "model/uri": { meaning: "the model URI is malformed: see docs/models.md", exit: 2 },
  // tool
  "tool/aborted": { meaning: "the tool call was cancelled", exit: 1 },
  "tool/arguments-invalid": { meaning: "the tool's arguments are invalid", exit: 1 },
  "tool/call-failed": { meaning: "the MCP tool call failed", exit: 1 },
  "tool/duplicate-name": { meaning: "two tools share a name: rename one", exit: 1 },
  "tool/effect-invalid": { meaning: "a tool declares an effect Warrant does not know", exit: 1 },
  "tool/failed": { meaning: "the tool failed", exit: 1 },
  "tool/input-schema": { meaning: "a tool's input schema is not one Warrant takes", exit: 1 },
  "tool/io": { meaning: "a workspace file cannot be read", exit: 1 },
  "tool/mcp-config": { meaning: "an MCP server's configuration is invalid", exit: 1 },
  "tool/mcp-unavailable": { meaning: "an MCP server cannot be started or reached", exit: 1 },
  "tool/name-invalid": { meaning: "a tool's name is not one a model may call", exit: 1 },
  "tool/not-a-directory": { meaning: "the workspace path is not a folder", exit: 1 },
  "tool/not-a-file": { meaning: "the workspace path is not a file", exit: 1 },
  "tool/not-found": { meaning: "no such file or folder in the workspace", exit: 1 },
  "tool/path-outside-workspace": {
    meaning: "the path leaves the workspace: give one relative to it",
    exit: 1,
  },
  "tool/registry": { meaning: "the tools do not register: see the problem named", exit: 1 },
  "tool/sandbox": { meaning: "the contained environment failed during the tool call", exit: 1 },
  "tool/server-died": { meaning: "the MCP server stopped during the call", exit: 1 },
  "tool/server-unavailable": { meaning: "the MCP server is not running", exit: 1 },
  "tool/timeout": { meaning: "the tool did not answer in time", exit: 1 },
  "tool/unknown": { meaning: "no tool of that name", exit: 1 },
  // skill
  "skill/not-found": { meaning: "a skill's file is missing", exit: 1 },
  "skill/not-text": { meaning: "a skill's file is not UTF-8 text", exit: 1 },
  "skill/too-large": { meaning: "a skill's file is over its size limit", exit: 1 },
  // memory
  "memory/conflict": {
    meaning: "another writer changed the memory since it was read: it is unchanged",
    exit: 1,
  },
  "memory/too-large": {
    meaning: "the memory would be over its size limit: it is unchanged",
    exit: 1,
  },
  // sandbox
  "sandbox/baseline-copy": { meaning: "the run's baseline cannot be copied", exit: 1 },
  "sandbox/baseline-released": { meaning: "the baseline is not held here any more", exit: 1 },
  "sandbox/copy-failed": { meaning: "copying into the environment failed", exit: 1 },
  "sandbox/dependency-missing": {
    meaning: "a dependency is not a folder of the workspace",
    exit: 1,
  },
  "sandbox/destroyed": { meaning: "the environment is already destroyed", exit: 1 },
  "sandbox/egress-socket-path": {
    meaning: "the egress socket's path is too long: use a shorter temp root",
    exit: 1,
  },
  "sandbox/empty-argv": { meaning: "a command to run is empty", exit: 1 },
  "sandbox/host-error": { meaning: "the sandbox's host failed while running a step", exit: 1 },
  "sandbox/invalid-choice": {
    meaning: "--sandbox or WARRANT_SANDBOX names no backend: auto, bwrap or unshare",
    exit: 2,
  },
  "sandbox/invalid-name": { meaning: "an environment name is not [a-z0-9-]{1,64}", exit: 1 },
  "sandbox/leftover": { meaning: "a leftover environment cannot be removed", exit: 1 },
  "sandbox/no-seccomp": {
    meaning:
      "the unshare sandbox's seccomp filter cannot be loaded here: fix its loader, or pass --allow-weaker-sandbox",
    exit: 1,
  },
  "sandbox/not-found": { meaning: "no such file in the environment", exit: 1 },
  "sandbox/overlay-probe": { meaning: "probing for overlay mounts failed", exit: 1 },
  "sandbox/overlay-unavailable": { meaning: "an overlay mount cannot be made here", exit: 1 },
  "sandbox/read-failed": { meaning: "reading a file of the environment failed", exit: 1 },
  "sandbox/remove-failed": { meaning: "removing a file of the environment failed", exit: 1 },
  "sandbox/tmpdir-unreachable": {
    meaning: "the sandbox cannot reach the temp folder: set TMPDIR to a reachable one",
    exit: 1,
  },
  "sandbox/too-large": { meaning: "the file is over the environment's size limit", exit: 1 },
  "sandbox/toolchain-missing": { meaning: "a toolchain is not a folder", exit: 1 },
  "sandbox/stopping": {
    meaning: "the process was told to stop while an environment was made: it is not made",
    exit: 1,
  },
  "sandbox/tree-changed": { meaning: "a folder moved while it was walked: try again", exit: 1 },
  "sandbox/unavailable": {
    meaning: "the named sandbox does not work on this host: pick another or install it",
    exit: 1,
  },
  "sandbox/whiteout-failed": { meaning: "marking deleted files in the overlay failed", exit: 1 },
  "sandbox/write-failed": { meaning: "writing a file of the environment failed", exit: 1 },
  "sandbox/xattr-unreadable": {
    meaning: "the overlay's extended attributes cannot be read",
    exit: 1,
  },
  // runtime
  "runtime/agent-missing": { meaning: "the task pack names no agent for the role", exit: 1 },
  "runtime/binding-missing": { meaning: "the loop has no binding record", exit: 1 },
  "runtime/failed": { meaning: "the drive failed: see the error's message", exit: 1 },
  "runtime/host-key": { meaning: "a host key name is not a public key", exit: 1 },
  "runtime/host-key-missing": {
    meaning: "the store's host key is not in the key folder: copy it there (docs/storage.md)",
    exit: 1,
    http: 500,
  },
  "runtime/no-ledger": { meaning: "memory writes and sub-agents need the drive's ledger", exit: 1 },
  "runtime/no-question": {
    meaning: "the loop waits for no answer",
    exit: 1,
    http: 409,
  },
  "runtime/no-queue": { meaning: "dispatching and workers need a job queue (PostgreSQL)", exit: 1 },
  "runtime/package-root": { meaning: "Warrant's package root cannot be found", exit: 1 },
  "runtime/preflight-check": { meaning: "a preflight check failed to run", exit: 1 },
  "runtime/proposal-missing": { meaning: "a proposal record the loop names is missing", exit: 1 },
  "runtime/shutting-down": {
    meaning: "the process is shutting down: the drive was stopped",
    exit: 1,
  },
  // records
  "records/act-unsigned": {
    meaning: "an operator act is not signed by a host key of the loop",
    exit: 1,
  },
  "records/admission-missing": {
    meaning: "an execution does not name the review and approvals that admitted it",
    exit: 1,
  },
  "records/approval-missing": { meaning: "an admitted run names no approval", exit: 1 },
  "records/body-invalid": { meaning: "a record's body does not match its kind's schema", exit: 1 },
  "records/key-conflict": { meaning: "more than one host key is pinned for the loop", exit: 1 },
  "records/key-missing": { meaning: "no host key is pinned for the loop", exit: 1 },
  "records/key-not-trusted": {
    meaning: "the loop's host key is not the one trusted: check --key",
    exit: 1,
  },
  "records/mismatch": { meaning: "a record does not match the fact that names it", exit: 1 },
  "records/missing": { meaning: "a record a fact names is not in the ledger", exit: 1 },
  "records/not-built": {
    meaning: "a record lacks its ref or query (a fault in the caller)",
    exit: 1,
  },
  "records/not-json": { meaning: "a value has no JSON form", exit: 1 },
  "records/orphan": { meaning: "a record belongs to no fact of the loop", exit: 1 },
  "records/signature-invalid": {
    meaning: "the host key record is not signed by the key it pins",
    exit: 1,
  },
  "records/signature-key": {
    meaning: "a record is signed by a key that is not the loop's",
    exit: 1,
  },
  "records/signature-missing": { meaning: "a record that must be signed is not", exit: 1 },
  // id
  "id/invalid": { meaning: "the identifier is not spelled as its kind requires", exit: 1 },
  // diff
  "diff/changeset-incomplete": {
    meaning: "the run's changeset is incomplete: its change cannot be shown whole",
    exit: 1,
    http: 409,
  },
  "diff/no-changeset": {
    meaning: "the verified run kept no changeset (verified before changes were kept)",
    exit: 1,
    http: 409,
  },
  "diff/not-verified": { meaning: "the loop has no verified run yet", exit: 1, http: 409 },
  "diff/run-unknown": {
    meaning: "the run names no run of the loop, or several: give more of the ref",
    exit: 1,
    http: 404,
  },
  // apply
  "apply/audit-failed": {
    meaning: "the loop fails its audit: its change is not taken",
    exit: 1,
  },
  "apply/branch-exists": {
    meaning: "the branch already exists: name another with --branch",
    exit: 1,
  },
  "apply/branch-invalid": { meaning: "the branch name is not one git takes", exit: 1 },
  "apply/changeset-incomplete": {
    meaning: "the run's changeset is incomplete: nothing was written",
    exit: 1,
  },
  "apply/content-mismatch": {
    meaning: "the change's record was altered: nothing was written",
    exit: 1,
  },
  "apply/dirty-worktree": {
    meaning: "the git work tree has uncommitted changes: commit or stash",
    exit: 1,
  },
  "apply/diverged": {
    meaning: "the target no longer holds what the run started from: nothing was written",
    exit: 1,
  },
  "apply/git-failed": { meaning: "git failed: no branch was made", exit: 1 },
  "apply/no-changeset": { meaning: "the verified run kept no changeset to take", exit: 1 },
  "apply/not-a-repository": { meaning: "the target is not a git work tree (--git)", exit: 1 },
  "apply/not-verified": {
    meaning: "the loop has no verified run: there is no change to take",
    exit: 1,
  },
  "apply/outside": { meaning: "a path of the change leaves the target folder: refused", exit: 1 },
  "apply/path-invalid": {
    meaning: "the change lists a path no run may write: nothing was written",
    exit: 1,
  },
  "apply/run-unknown": { meaning: "the run names no run of the loop, or several", exit: 1 },
  "apply/target-missing": { meaning: "the target is not a folder", exit: 1 },
  "apply/write-failed": { meaning: "writing the change failed: see what was written", exit: 1 },
  // operator
  "operator/binding-lost": {
    meaning: "the operator's binding was lost",
    contract: OTC,
    reserved: true,
  },
  "operator/file-invalid": { meaning: "the operators' token file is invalid", exit: 1 },
  "operator/file-unwritable": { meaning: "the operators' token file cannot be written", exit: 1 },
  "operator/name-invalid": {
    meaning: "the operator name is empty, too long, or holds white space or a control character",
    exit: 2,
  },
  // internal
  "internal/migrations": {
    meaning: "the store's migrations are out of order (a fault in Warrant)",
    exit: 1,
  },
  "internal/payload-schema": {
    meaning: "a payload schema does not resolve (a fault in Warrant)",
    exit: 1,
  },
  "internal/unreachable": {
    meaning: "code thought unreachable ran (a fault in Warrant): report it",
    exit: 1,
  },
  // queue
  "queue/loop-stopped": {
    meaning: "the loop has stopped: a stopped loop is not driven again",
    exit: 1,
  },
  "queue/requeue-failed": { meaning: "a worker could not queue a released loop again", exit: 1 },
  // egress
  "egress/bad-request": { meaning: "the sandbox's proxy request is malformed" },
  "egress/bad-target": { meaning: "the proxy request's target is not host:port" },
  "egress/connect-failed": { meaning: "the allowed host cannot be reached" },
  "egress/head-too-large": { meaning: "the proxy request's head is too large" },
  "egress/not-listed": { meaning: "the host is not in the pack's network list" },
  "egress/port-not-listed": { meaning: "the host is listed, but not on that port" },
  "egress/resolve-failed": {
    meaning: "the host's name does not resolve, or resolves to a refused address",
  },
  "egress/too-many-connections": { meaning: "the run opened too many connections at once" },
  "egress/unsupported": { meaning: "the proxy request uses a method or protocol not supported" },
  // record
  "record/not-found": { meaning: "no record with that ref in the store", exit: 1, http: 404 },
  "record/ref-invalid": {
    meaning: "the text is not a record ref (PREFIX:sha256: and 43 base64url characters)",
    exit: 2,
  },
  // request
  "request/bad-escape": { meaning: "the URL path holds a malformed %-escape", http: 400 },
  "request/bad-host": { meaning: "the Host header is missing or malformed", http: 400 },
  "request/bad-target": { meaning: "the request target is not a URL path", http: 400 },
  "request/headers-too-large": { meaning: "the request's headers are too large", http: 431 },
  "request/invalid": {
    meaning: "the body or a parameter is invalid: see the message for the field",
    http: 400,
  },
  "request/malformed": { meaning: "the request is not well-formed HTTP/1.1", http: 400 },
  "request/too-large": { meaning: "the body is over 1 MiB", http: 413 },
  // auth
  "auth/foreign-host": {
    meaning: "the console does not answer to that Host: add it with serve --allow-host",
    http: 403,
  },
  "auth/foreign-origin": {
    meaning: "a request from another origin may not change state",
    http: 403,
  },
  "auth/token-required": {
    meaning: "the API needs Authorization: Bearer TOKEN (the console URL's token)",
    http: 401,
  },
  // server
  "server/internal": { meaning: "the console failed without a code: see its message", http: 500 },
  "server/no-token": { meaning: "the console needs a token or operators' tokens", exit: 1 },
  // api
  "api/not-found": { meaning: "no such API route or method", http: 404 },
  // audit
  "audit/anchor-in-store": {
    meaning: "the trusted-keys file lies in the store's folder: keep it outside",
    exit: 1,
  },
  "audit/key-invalid": {
    meaning: "--key is neither a public key nor a readable key file",
    exit: 1,
  },
  "audit/key-not-pinned": {
    meaning: "the loop's host key is not pinned: name a trusted key with --key",
    exit: 1,
  },
  "audit/trusted-keys-invalid": {
    meaning: "the trusted-keys file cannot be read or parsed",
    exit: 1,
  },
  "audit/unsigned-tail": { meaning: "facts lie after the last signed head", exit: 1 },
  // bundle
  "bundle/head-mismatch": { meaning: "the bundle's head does not match its facts", exit: 1 },
  "bundle/head-missing": { meaning: "the bundle has no signed head", exit: 1 },
  "bundle/invalid": { meaning: "the file is not a loop bundle", exit: 1 },
  "bundle/loop-mismatch": { meaning: "the bundle's loop is not the one its facts give", exit: 1 },
  // changeset
  "changeset/not-a-file": { meaning: "a changed path is not a regular file: left out", exit: 1 },
  "changeset/too-large": { meaning: "the change is too large to keep whole", exit: 1 },
  "changeset/unreadable": { meaning: "the run's change cannot be read", exit: 1 },
  "changeset/walk-incomplete": { meaning: "the walk of the change did not finish", exit: 1 },
  // patch
  "patch/hunk-failed": { meaning: "a hunk of the diff does not apply", exit: 1 },
  "patch/malformed": { meaning: "the diff is malformed", exit: 1 },
  "patch/not-utf8": { meaning: "the patched file is not UTF-8 text", exit: 1 },
  "patch/target-exists": { meaning: "the diff creates a file that exists", exit: 1 },
  "patch/target-missing": { meaning: "the diff changes a file that is absent", exit: 1 },
  // preflight
  "preflight/command-lookup": { meaning: "looking up an MCP server's command failed", exit: 1 },
  "preflight/command-not-found": {
    meaning: "an MCP server's command is not on PATH: install it",
    exit: 1,
  },
  // input
  "input/not-regular-file": { meaning: "the input is not a regular file", exit: 2 },
  "input/too-large": { meaning: "the input file is over --max-bytes", exit: 2 },
  // eval
  "eval/agent-required": {
    meaning: "the eval has several agents: name one as EVAL:AGENT",
    exit: 1,
  },
  "eval/agent-unknown": { meaning: "the eval has no agent of that name", exit: 1 },
  "eval/concurrency": { meaning: "concurrency is not a positive integer", exit: 2 },
  "eval/definition-invalid": { meaning: "an agent's definition does not validate", exit: 1 },
  "eval/definition-missing": { meaning: "an agent's definition cannot be read", exit: 1 },
  "eval/drive-failed": { meaning: "a cell's drive failed (the cell is in error, retried)" },
  "eval/duplicate-id": { meaning: "a task or agent id is given twice", exit: 1 },
  "eval/epochs": { meaning: "certify takes a positive number of epochs", exit: 2 },
  "eval/error": { meaning: "a cell is in error without a code of its own" },
  "eval/id-invalid": {
    meaning: "the text is not an eval id (eval:NAME-16 characters, as eval run prints it)",
    http: 400,
  },
  "eval/interrupted": {
    meaning: "the host died while a step of the cell's run ran (the cell is retried)",
  },
  "eval/invalid": { meaning: "the eval set was refused: see its problems", exit: 1 },
  "eval/job-failed": { meaning: "a dispatched cell's job used up its attempts" },
  "eval/json": { meaning: "the set file is not JSON (its line and column say where)", exit: 1 },
  "eval/leased-elsewhere": { meaning: "another driver holds the cell's loop" },
  "eval/model-invalid": { meaning: "an agent's model is not a model URI for a task", exit: 1 },
  "eval/not-found": { meaning: "no eval with that id in the store", exit: 1, http: 404 },
  "eval/not-opened": { meaning: "a cell's loop did not open" },
  "eval/not-settled": { meaning: "a cell's loop neither stopped nor waits" },
  "eval/oracle-missing": { meaning: "a task's oracle diff cannot be read", exit: 1 },
  "eval/pack-invalid": {
    meaning: "a task's pack does not load (its own problem in the message)",
    exit: 1,
  },
  "eval/placeholder-unknown": { meaning: "a placeholder other than {task}", exit: 1 },
  "eval/price-missing": {
    meaning: "with limits.costUsd, a model the pricing table does not price: add its price",
    exit: 1,
  },
  "eval/pricing-invalid": { meaning: "the pricing table is malformed", exit: 1 },
  "eval/pricing-json": { meaning: "the pricing table is not JSON", exit: 1 },
  "eval/pricing-read": { meaning: "the pricing table cannot be read", exit: 1 },
  "eval/pricing-required": { meaning: "a cost limit needs a pricing table: give one", exit: 1 },
  "eval/read": { meaning: "the set file cannot be read", exit: 1 },
  "eval/regression": {
    meaning: "compare --fail-on-regression: the head is worse than the base",
    exit: 1,
  },
  "eval/retries": { meaning: "retries is not an integer ≥ 0", exit: 2 },
  "eval/role-unknown": { meaning: "the task's pack names no agent for that role", exit: 1 },
  "eval/schema": {
    meaning: "the set does not match its schema (a close name is offered)",
    exit: 1,
  },
  "eval/script-missing": { meaning: "a scripted model's file is not there for a task", exit: 1 },
  "eval/side-invalid": { meaning: "a side is neither EVAL nor EVAL:AGENT", exit: 1 },
  // path
  "path/refused": { meaning: "the path is empty, absolute or leaves its folder", exit: 1 },
} as const satisfies Record<`${CodeNamespace}/${string}`, CodeSpec>;

/** A code the registry knows. */
export type Code = keyof typeof CODES;

const KNOWN: ReadonlyMap<string, CodeSpec> = new Map(Object.entries(CODES));

/** The code's namespace (before the first slash), or undefined when it has none. */
export function namespaceOf(code: string): string | undefined {
  const slash = code.indexOf("/");
  return slash > 0 && slash < code.length - 1 ? code.slice(0, slash) : undefined;
}

/** True for a code the registry lists. */
export function isCode(code: unknown): code is Code {
  return typeof code === "string" && KNOWN.has(code);
}

/** The registry's entry for a code, undefined for one it does not list. */
export function codeSpec(code: string): CodeSpec | undefined {
  return KNOWN.get(code);
}

/** The namespaces of one kind, in registry order. */
export function codeNamespaces(kind?: CodeNamespaceKind): readonly CodeNamespace[] {
  const all = Object.keys(CODE_NAMESPACES) as CodeNamespace[];
  return kind === undefined ? all : all.filter((ns) => CODE_NAMESPACES[ns].kind === kind);
}

/** The exit status a command gives when it fails with `code`: the registry's, else 1. */
export function exitCodeOf(code: unknown): CodeExit {
  return (typeof code === "string" ? KNOWN.get(code)?.exit : undefined) ?? 1;
}

/** A code the console's API answers with a status of its own. */
export type HttpCode = {
  [K in Code]: (typeof CODES)[K] extends { readonly http: number } ? K : never;
}[Code];

/** The console API's status for a code that has one. */
export function httpStatus(code: HttpCode): number {
  return KNOWN.get(code)?.http ?? 500;
}

/** The console API's status for `code`, undefined where the registry gives none. */
export function httpStatusOf(code: string): number | undefined {
  return KNOWN.get(code)?.http;
}
