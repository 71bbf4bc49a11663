// The SQLite ledger a mistyped store path probably meant: a similarly named file beside it, else the
// default ledger (`.warrant/ledger.db`) of the working folder or the nearest parent holding one.
// Only looks (stat and readdir); never creates or opens anything.
import { readdirSync, statSync } from "node:fs";
import path from "node:path";
import { closestNames } from "../../core/text/did-you-mean.js";

const DEFAULT_LEDGER = path.join(".warrant", "ledger.db");
const LEDGER_EXTENSIONS = new Set([".db", ".sqlite", ".sqlite3"]);

function isFile(file: string): boolean {
  try {
    return statSync(file).isFile();
  } catch {
    return false;
  }
}

/**
 * A ledger-like file beside `file` (its extension `.db`, `.sqlite`, `.sqlite3` or the one given)
 * that differs only in extension, or whose name is a few edits away.
 */
function similarSibling(file: string): string | undefined {
  const dir = path.dirname(file);
  let names: string[];
  try {
    names = readdirSync(dir);
  } catch {
    return undefined;
  }
  const base = path.basename(file);
  const stem = path.parse(base).name;
  const sameStem = names.find(
    (n) => n !== base && path.parse(n).name === stem && LEDGER_EXTENSIONS.has(path.extname(n)),
  );
  const given = path.extname(base);
  const ledgers = names.filter((n) => {
    const ext = path.extname(n);
    return LEDGER_EXTENSIONS.has(ext) || (ext !== "" && ext === given);
  });
  const candidate = sameStem ?? closestNames(base, ledgers)[0];
  if (candidate === undefined) return undefined;
  const found = path.join(dir, candidate);
  return isFile(found) ? found : undefined;
}

/** The default ledger of `cwd` or of the nearest parent that has one. */
function defaultLedgerAbove(cwd: string): string | undefined {
  for (let dir = path.resolve(cwd); ; dir = path.dirname(dir)) {
    const file = path.join(dir, DEFAULT_LEDGER);
    if (isFile(file)) return file;
    if (path.dirname(dir) === dir) return undefined;
  }
}

/** The absolute path of the ledger `missing` (absolute, not there) probably meant, if any. */
export function nearbyLedger(missing: string, cwd: string): string | undefined {
  const sibling = similarSibling(missing);
  if (sibling !== undefined) return sibling;
  const above = defaultLedgerAbove(cwd);
  return above === missing ? undefined : above;
}

/** How to name `file` in a store URI for someone working in `cwd`: relative inside it. */
export function sqliteUriFor(file: string, cwd: string): string {
  const rel = path.relative(path.resolve(cwd), file);
  return rel !== "" && !rel.startsWith("..") && !path.isAbsolute(rel)
    ? `sqlite:${rel}`
    : `sqlite:${file}`;
}
