// The identifiers a caller of the library holds, as branded strings: a `QueryId` cannot be passed
// where a `RunRef` is meant, though both are strings on the wire. They are given out by the
// library (a handle's query, an outcome, a listing) or made from text by the parsers here, which
// check the contract's spelling first. Inside the runtime they are plain strings.
import { fail, ok, type Result, WarrantError } from "./result.js";

declare const BRAND: unique symbol;
/** `T` marked as the identifier `B`: assignable to `T`, but no `T` is assignable to it. */
export type Brand<T, B extends string> = T & { readonly [BRAND]: B };

/** A loop's query id (`query:<id>`). */
export type QueryId = Brand<string, "QueryId">;
/** A run: the ref of the proposal it was admitted for (`corpus-experiment:sha256:…`). */
export type RunRef = Brand<string, "RunRef">;
/** A passage of a loop (`passage:sha256:…`). */
export type PassageRef = Brand<string, "PassageRef">;
/** A record of the ledger (`<prefix>:sha256:<43 base64url>`). */
export type RecordRef = Brand<string, "RecordRef">;

const MAX_ID = 512;
const PATTERNS = {
  QueryId: /^query:\S+$/u,
  RunRef: /^corpus-experiment:sha256:[A-Za-z0-9_-]{43}$/u,
  PassageRef: /^[a-z][a-z0-9-]*:\S+$/u,
  RecordRef: /^[a-z][a-z0-9-]*:sha256:[A-Za-z0-9_-]{43}$/u,
} as const;

type IdName = keyof typeof PATTERNS;
interface Ids {
  readonly QueryId: QueryId;
  readonly RunRef: RunRef;
  readonly PassageRef: PassageRef;
  readonly RecordRef: RecordRef;
}

const SPELLING: Readonly<Record<IdName, string>> = {
  QueryId: "query:<id>",
  RunRef: "corpus-experiment:sha256:<43 base64url characters>",
  PassageRef: "<prefix>:<id>",
  RecordRef: "<prefix>:sha256:<43 base64url characters>",
};

function parse<N extends IdName>(name: N, text: unknown): Result<Ids[N]> {
  if (typeof text === "string" && text.length <= MAX_ID && PATTERNS[name].test(text)) {
    return ok(text as Ids[N]);
  }
  const shown = typeof text === "string" ? JSON.stringify(text.slice(0, 80)) : typeof text;
  return fail([
    { code: "id/invalid", path: "", message: `${shown} is not a ${name} (${SPELLING[name]})` },
  ]);
}

export const parseQueryId = (text: unknown): Result<QueryId> => parse("QueryId", text);
export const parseRunRef = (text: unknown): Result<RunRef> => parse("RunRef", text);
export const parsePassageRef = (text: unknown): Result<PassageRef> => parse("PassageRef", text);
export const parseRecordRef = (text: unknown): Result<RecordRef> => parse("RecordRef", text);

/** The id `text` spells, or a WarrantError `id/invalid` (for text from outside: argv, a request). */
function expectId<N extends IdName>(name: N, text: unknown): Ids[N] {
  const r = parse(name, text);
  if (r.ok) return r.value;
  throw new WarrantError("id/invalid", r.errors[0]?.message ?? `not a ${name}`);
}

export const toQueryId = (text: unknown): QueryId => expectId("QueryId", text);
export const toRunRef = (text: unknown): RunRef => expectId("RunRef", text);
export const toPassageRef = (text: unknown): PassageRef => expectId("PassageRef", text);
export const toRecordRef = (text: unknown): RecordRef => expectId("RecordRef", text);

/**
 * Ids the ledger already holds, handed out as the branded ids they are: the store only ever holds
 * ids made by the runtime or checked by the parsers above, so they are not parsed again. Never
 * for text from outside (argv, a request): that goes through `to…` or `parse…`.
 */
export const heldQueryId = (text: string): QueryId => text as QueryId;
export const heldRunRef = (text: string): RunRef => text as RunRef;
export const heldRecordRef = (text: string): RecordRef => text as RecordRef;
