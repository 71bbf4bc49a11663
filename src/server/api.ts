// The console API's answers as the page (web/) reads them: types only, with no code and no import,
// so that the page, bundled for the browser, shares them without loading a server module. The
// handler checks its answers against them (`satisfies`).

/** `GET /api/records/REF/view`: a record with what is stored beside it. */
export interface RecordViewAnswer {
  readonly ref: string;
  readonly kind: string;
  readonly query: string;
  readonly body: unknown;
  /** For an execution: the run report beside it. */
  readonly report?: { readonly ref: string; readonly body: unknown };
  /** For an execution: the operator acts on its run's steps. */
  readonly acts?: readonly unknown[];
  /** For a complete changeset: its change as a git diff. */
  readonly diff?: string;
  /** For a run report or an execution with its report: why each failed step failed, by step id. */
  readonly stepReasons?: Readonly<Record<string, string>>;
}

/** Any refusal: `{ok: false, code, message}` at the status of its code. */
export interface ApiRefusal {
  readonly ok: false;
  readonly code: string;
  readonly message: string;
}
