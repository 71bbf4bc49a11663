// What `warrant loop simulate` and `warrant loop check` do: run a command script through the
// decider; check a loop document, or audit a stored or exported loop (chain, heads, records, keys).

import {
  type AuditReport,
  auditBundle,
  checkLoopDocument,
  isBundle,
  type LoopState,
  type Problem,
  parseInstant,
  parseScript,
  type Result,
  simulate,
  stateNameAt,
  type TrustAnchor,
} from "../index.js";
import { auditStoredLoop } from "../library/audit.js";
import { resolveStoreUri, WarrantError } from "../library/basics.js";
import { openLedgerToRead } from "../library/open-ledger.js";
import {
  defaultTrustedKeys,
  publicKeyNamed,
  readTrustedKeys,
  refuseInsideStore,
} from "../library/trusted-keys.js";
import {
  EXIT_INVALID,
  EXIT_OK,
  formatProblem,
  maxBytesOf,
  out,
  printJson,
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
  /** The operator acts the signed heads cover. */
  readonly "acts/covered": number;
  /** A trusted key held outside the store (`--key`, a trusted-keys file) vouches for the loop. */
  readonly "key/pinned": boolean;
  /** Where that key came from: `--key`, or the trusted-keys file's path. */
  readonly "key/pinned-by"?: string;
  /** The same as `key/pinned` (the name of earlier versions). */
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
      const pinned = audited["key/pinned-by"];
      const key =
        pinned === undefined
          ? `host key ${audited["host/key"]}, not pinned (pin it with --key or a trusted-keys file)`
          : `host key ${audited["host/key"]}, pinned by ${pinned}`;
      out(
        `${name}: valid (${stateName}, ${facts} facts, ${audited.records} records signed by ${key}; ` +
          `chain signed through fact ${audited["signed-through"]}, ${audited["acts/covered"]} operator acts)`,
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
  readonly trustedKeys?: string;
  readonly requirePinned?: boolean;
  readonly json?: boolean;
  readonly maxBytes?: string;
}

/**
 * The keys the check trusts: `--key` (a public key or a key file), else `--trusted-keys FILE`, else
 * the default trusted-keys file when it exists. A key or file that cannot be read is a usage error.
 */
async function trustOf(opts: CheckOpts): Promise<TrustAnchor | undefined> {
  try {
    const given = opts.key ?? opts.trustedKeys;
    if (given !== undefined && opts.store !== undefined)
      refuseInsideStore(given, resolveStoreUri(opts.store));
    if (opts.key !== undefined) return { keys: [await publicKeyNamed(opts.key)], source: "--key" };
    if (opts.trustedKeys !== undefined) return readTrustedKeys(opts.trustedKeys);
    return defaultTrustedKeys();
  } catch (e) {
    if (e instanceof WarrantError) throw new UsageError(e.message);
    throw e;
  }
}

function audited(r: Result<AuditReport>): Audited | undefined {
  if (!r.ok) return undefined;
  const by = r.value.pinnedBy;
  return {
    "host/key": r.value.keys[0] ?? "",
    keys: r.value.keys,
    records: r.value.records,
    "signed-through": r.value.signedThrough,
    "acts/covered": r.value.actsCovered,
    "key/pinned": by !== undefined,
    ...(by === undefined ? {} : { "key/pinned-by": by }),
    "key/required": by !== undefined,
  };
}

const stateOf = (r: Result<AuditReport>): Result<LoopState> =>
  r.ok ? { ok: true, value: r.value.state } : r;

export async function checkAction(target: string, opts: CheckOpts): Promise<void> {
  const now = parseNow(opts.now);
  const json = opts.json === true;
  const trusted = await trustOf(opts);
  const requirePinned = opts.requirePinned === true;
  if (opts.store === undefined) {
    const read = readJson(target, "loop document", maxBytesOf(opts));
    if (read.ok && isBundle(read.value)) {
      const r = await auditBundle(read.value, {
        ...(trusted === undefined ? {} : { trusted }),
        requirePinned,
      });
      report({ file: target }, stateOf(r), now, json, audited(r));
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
      trusted: trusted ?? false,
      requirePinned,
    });
    report({ query: target }, stateOf(r), at, json, audited(r));
  } finally {
    await store.close();
  }
}
