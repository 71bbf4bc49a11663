// What `warrant loop simulate` and `warrant loop check` do: run a command script through the
// decider; check a loop document, or audit a stored or exported loop (chain, heads, records, keys).
import { existsSync } from "node:fs";
import path from "node:path";
import { HOST_KEY_FILE, hostKeyDir } from "../adapters/fs/host-key.js";
import { resolveStoreUri } from "../adapters/store/open-store.js";
import type { AuditReport } from "../core/loop/audit.js";
import { auditBundle, isBundle } from "../core/loop/bundle.js";
import { checkLoopDocument } from "../core/loop/check.js";
import { parseScript } from "../core/loop/script.js";
import { simulate } from "../core/loop/simulate.js";
import { type LoopState, stateNameAt } from "../core/loop/state.js";
import { parseInstant } from "../core/loop/time.js";
import { base64url } from "../core/records/canonical.js";
import { publicKeyOf } from "../core/records/signature.js";
import type { Problem, Result } from "../core/result.js";
import { auditStoredLoop } from "../library/audit.js";
import { openLedgerToRead } from "../library/open-ledger.js";
import {
  EXIT_INVALID,
  EXIT_OK,
  formatProblem,
  maxBytesOf,
  out,
  printJson,
  readInputFile,
  readInputText,
  UsageError,
} from "./io.js";

/** A JSON input file (a usage error when unreadable, not regular or too large; `loop/json` when not JSON). */
function readJson(file: string, what: string, maxBytes: number): Result<unknown> {
  const text = readInputText(file, maxBytes, what);
  if (text === undefined) {
    return { ok: false, errors: [{ code: "loop/json", path: "", message: "not UTF-8 text" }] };
  }
  try {
    return { ok: true, value: JSON.parse(text) as unknown };
  } catch (e) {
    return {
      ok: false,
      errors: [{ code: "loop/json", path: "", message: `not JSON: ${(e as Error).message}` }],
    };
  }
}

const wire = (p: Problem) => ({ code: p.code, path: p.path, message: p.message });

function parseNow(text: string | undefined): Date | undefined {
  if (text === undefined) return undefined;
  const ms = parseInstant(text);
  if (ms === undefined) throw new UsageError(`--now ${text} is not an RFC 3339 date-time`);
  return new Date(ms);
}

export function simulateAction(file: string, opts: { json?: boolean; maxBytes?: string }): void {
  const read = readJson(file, "script", maxBytesOf(opts));
  const script = read.ok ? parseScript(read.value) : read;
  if (!script.ok) {
    if (opts.json === true) printJson({ valid: false, errors: script.errors.map(wire) });
    else out(script.errors.map((p) => formatProblem(file, p)).join("\n"));
    process.exitCode = EXIT_INVALID;
    return;
  }
  const sim = simulate(script.value);
  if (opts.json === true) {
    printJson({ outcomes: sim.outcomes, loop: sim.loop });
  } else {
    const lines = sim.outcomes.map((o, i) => {
      const head = `${String(i + 1).padStart(4)} ${o.op.padEnd(14)} ${o.result}`;
      if (o.result === "refused") {
        const counter = o.counter === undefined ? "" : ` (${o.counter})`;
        return `${head} ${o.code}${counter}: ${sim.messages[i] ?? ""}`;
      }
      return `${head} #${o.sequence}`;
    });
    const doc = sim.loop;
    if (doc === null) lines.push("loop: never opened");
    else {
      const spent = Object.entries(doc.spent)
        .map(([k, v]) => `${k} ${v}`)
        .join(", ");
      const stop = doc.stop === undefined ? "" : ` (${doc.stop.reason})`;
      lines.push(
        `loop ${doc["query/id"]}: ${doc.state}${stop}, deadline ${doc.deadline}, ${doc.facts.length} facts; spent ${spent}`,
      );
    }
    out(lines.join("\n"));
  }
  process.exitCode = EXIT_OK;
}

/** What a complete audit adds to a valid check's output. */
interface Audited {
  readonly "host/key": string;
  readonly keys: readonly string[];
  readonly records: number;
  readonly "signed-through": number;
  /** The key was required (the host's own or --key), not taken as found. */
  readonly "key/required": boolean;
}

function report(
  subject: { file: string } | { query: string },
  result: Result<LoopState>,
  now: Date | undefined,
  json: boolean,
  audited?: Audited,
): void {
  const name = "file" in subject ? subject.file : subject.query;
  if (result.ok) {
    const state = result.value;
    const facts = state.facts.length;
    const stateName =
      state.stop !== undefined
        ? "stopped"
        : now === undefined
          ? "open or deadline-passed"
          : stateNameAt(state, now.getTime());
    if (json) {
      printJson({ ...subject, valid: true, state: stateName, facts, ...audited, errors: [] });
    } else if (audited === undefined) {
      out(`${name}: valid (${stateName}, ${facts} facts)`);
    } else {
      const key = audited["key/required"]
        ? `host key ${audited["host/key"]}`
        : `host key ${audited["host/key"]} (as pinned; --key requires one)`;
      out(
        `${name}: valid (${stateName}, ${facts} facts, ${audited.records} records signed by ${key}; ` +
          `chain signed through fact ${audited["signed-through"]})`,
      );
    }
    process.exitCode = EXIT_OK;
  } else {
    if (json) printJson({ ...subject, valid: false, errors: result.errors.map(wire) });
    else out(result.errors.map((p) => formatProblem(name, p)).join("\n"));
    process.exitCode = EXIT_INVALID;
  }
}

export interface CheckOpts {
  readonly now?: string;
  readonly store?: string;
  readonly key?: string;
  readonly json?: boolean;
  readonly maxBytes?: string;
}

/**
 * The public key `--key` names: 43 base64url characters, or a key file (the 32-byte host.key, or
 * a text file holding the public key). Without --key, for a store: the host key kept beside it,
 * when there is one.
 */
async function expectedKey(opts: CheckOpts): Promise<string | undefined> {
  const fromFile = async (file: string): Promise<string> => {
    const bytes = readInputFile(file, 4096, "key file");
    if (bytes.length === 32) return base64url(await publicKeyOf(bytes));
    const text = new TextDecoder().decode(bytes).trim();
    if (PUBLIC_KEY.test(text)) return text;
    throw new UsageError(`${file} holds neither a 32-byte host key nor a public key`);
  };
  if (opts.key !== undefined) return PUBLIC_KEY.test(opts.key) ? opts.key : fromFile(opts.key);
  if (opts.store === undefined) return undefined;
  const file = path.join(hostKeyDir(resolveStoreUri(opts.store)), HOST_KEY_FILE);
  return existsSync(file) ? fromFile(file) : undefined;
}

const PUBLIC_KEY = /^[A-Za-z0-9_-]{43}$/;

function audited(r: Result<AuditReport>, required: boolean): Audited | undefined {
  if (!r.ok) return undefined;
  return {
    "host/key": r.value.keys[0] ?? "",
    keys: r.value.keys,
    records: r.value.records,
    "signed-through": r.value.signedThrough,
    "key/required": required,
  };
}

const stateOf = (r: Result<AuditReport>): Result<LoopState> =>
  r.ok ? { ok: true, value: r.value.state } : r;

export async function checkAction(target: string, opts: CheckOpts): Promise<void> {
  const now = parseNow(opts.now);
  const json = opts.json === true;
  const key = await expectedKey(opts);
  if (opts.store === undefined) {
    const read = readJson(target, "loop document", maxBytesOf(opts));
    if (read.ok && isBundle(read.value)) {
      const r = await auditBundle(read.value, key);
      report({ file: target }, stateOf(r), now, json, audited(r, key !== undefined));
      return;
    }
    report(
      { file: target },
      read.ok ? checkLoopDocument(read.value, now === undefined ? {} : { now }) : read,
      now,
      json,
    );
    return;
  }
  const store = await openLedgerToRead(opts.store);
  try {
    const at = now ?? new Date();
    const r = await auditStoredLoop(store, target, {
      now: at,
      ...(key === undefined ? {} : { key }),
    });
    report({ query: target }, stateOf(r), at, json, audited(r, key !== undefined));
  } finally {
    await store.close();
  }
}
