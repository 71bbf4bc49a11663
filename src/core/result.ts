// The shape every validator and decider returns: refusals are values, never throws.

/** One error or refusal: a stable namespaced code, a JSON Pointer into the document, a message. */
export interface Problem {
  readonly code: string;
  readonly path: string;
  readonly message: string;
  readonly line?: number;
  readonly column?: number;
  /** Extra machine-readable detail (a failing schema keyword, a counter name, ...). */
  readonly detail?: Readonly<Record<string, unknown>>;
}

export type Result<T> =
  | { readonly ok: true; readonly value: T }
  | { readonly ok: false; readonly errors: readonly Problem[] };

export function ok<T>(value: T): Result<T> {
  return { ok: true, value };
}

export function fail<T = never>(errors: readonly Problem[]): Result<T> {
  return { ok: false, errors };
}

/** The one exception class: for the exceptional (a broken invariant, an I/O failure), with a code. */
export class WarrantError extends Error {
  readonly code: string;
  readonly path: string | undefined;
  constructor(code: string, message: string, options?: { path?: string; cause?: unknown }) {
    super(message, options?.cause === undefined ? undefined : { cause: options.cause });
    this.name = "WarrantError";
    this.code = code;
    this.path = options?.path;
  }
}

/** Escape one reference token of a JSON Pointer (RFC 6901). */
export function pointerToken(token: string | number): string {
  return String(token).replaceAll("~", "~0").replaceAll("/", "~1");
}

export function pointer(...tokens: ReadonlyArray<string | number>): string {
  return tokens.map((t) => `/${pointerToken(t)}`).join("");
}

/** Exhaustiveness guard for switches over discriminated unions. */
export function assertNever(value: never, what: string): never {
  throw new WarrantError("internal/unreachable", `unexpected ${what}: ${JSON.stringify(value)}`);
}
