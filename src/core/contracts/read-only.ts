// Read-only views of the generated contract types (./types): the core reads wire documents and
// builds new ones, it never writes into one it was given.

/** `T` with every property, at every depth, read-only (arrays become read-only arrays). */
export type DeepReadonly<T> = T extends object
  ? { readonly [K in keyof T]: DeepReadonly<T[K]> }
  : T;
