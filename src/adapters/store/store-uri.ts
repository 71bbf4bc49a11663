// Store URIs (`sqlite:PATH`, `postgres://…`, `memory:`): parsing, choosing one from the flag or the
// environment, and removing passwords so a URI is always safe to print.
import type { Problem, Result } from "../../core/result.js";
import { fail, ok } from "../../core/result.js";

export const DEFAULT_STORE_URI = "sqlite:.warrant/ledger.db";

export type StoreLocation =
  | { readonly kind: "memory"; readonly uri: string }
  | { readonly kind: "sqlite"; readonly uri: string; readonly path: string }
  | {
      readonly kind: "postgres";
      /** Password removed: safe to print. */
      readonly uri: string;
      /** What the driver connects with (may carry a password: never print it). */
      readonly connectionString: string;
      readonly schema?: string;
    };

/** `--store` if given, else `WARRANT_STORE`, else `sqlite:.warrant/ledger.db`; empty means unset. */
export function resolveStoreUri(
  flag?: string,
  env: Readonly<Record<string, string | undefined>> = process.env,
): string {
  if (flag !== undefined && flag !== "") return flag;
  const fromEnv = env.WARRANT_STORE;
  if (fromEnv !== undefined && fromEnv !== "") return fromEnv;
  return DEFAULT_STORE_URI;
}

const SCHEMES = "sqlite:PATH, postgres://USER@HOST:PORT/DATABASE[?schema=NAME] or memory:";

/** Parse a store URI. Messages never repeat the URI itself: it may carry a password. */
export function parseStoreUri(uri: string): Result<StoreLocation> {
  const scheme = /^([A-Za-z][A-Za-z0-9+.-]*):/.exec(uri)?.[1]?.toLowerCase();
  if (scheme === undefined) return invalid(`the store URI has no scheme; use ${SCHEMES}`);
  switch (scheme) {
    case "memory":
      return uri.slice("memory:".length) === ""
        ? ok({ kind: "memory", uri: "memory:" })
        : invalid("a memory store URI is exactly `memory:`");
    case "sqlite": {
      let path = uri.slice("sqlite:".length);
      if (path.startsWith("//")) path = path.slice(2);
      if (path === "") return invalid("a SQLite store URI needs a path: sqlite:PATH");
      return ok({ kind: "sqlite", uri, path });
    }
    case "postgres":
    case "postgresql":
      return parsePostgres(uri);
    default:
      return invalid(`unknown store URI scheme "${scheme}:"; use ${SCHEMES}`);
  }
}

function parsePostgres(uri: string): Result<StoreLocation> {
  let url: URL;
  try {
    url = new URL(uri);
  } catch {
    return invalid("the PostgreSQL store URI does not parse as a URL");
  }
  if (url.hostname === "" && !url.searchParams.has("host")) {
    return invalid("the PostgreSQL store URI needs a host: postgres://USER@HOST:PORT/DATABASE");
  }
  const schema = url.searchParams.get("schema") ?? undefined;
  url.searchParams.delete("schema");
  const connectionString = url.toString();
  const shown = new URL(redactStoreUri(uri));
  return ok(
    schema === undefined
      ? { kind: "postgres", uri: shown.toString(), connectionString }
      : { kind: "postgres", uri: shown.toString(), connectionString, schema },
  );
}

const SECRET_PARAMS = new Set(["password", "sslpassword", "sslkey"]);

/** The URI without a password (user-info or query parameter); other URIs unchanged. */
export function redactStoreUri(uri: string): string {
  if (!/^postgres(ql)?:/i.test(uri)) return uri;
  let url: URL;
  try {
    url = new URL(uri);
  } catch {
    return "postgres://(unparseable)";
  }
  url.password = "";
  for (const name of [...url.searchParams.keys()]) {
    if (SECRET_PARAMS.has(name.toLowerCase())) url.searchParams.delete(name);
  }
  return url.toString();
}

function invalid(message: string): Result<StoreLocation> {
  const problem: Problem = { code: "store/uri-invalid", path: "", message };
  return fail([problem]);
}
