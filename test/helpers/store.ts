// A store made ready the way `warrant run` leaves one, for tests of commands that only read or act
// on a store (they refuse one that does not exist: store/not-found).
import { openStore } from "../../src/adapters/store/open-store.js";
import { resolveStoreUri } from "../../src/adapters/store/store-uri.js";

/** Creates the (empty) store `uri` names, relative to `cwd`, unless it is there already. */
export async function ensureStore(uri: string | undefined, cwd: string): Promise<void> {
  const store = await openStore(resolveStoreUri(uri, {}), { cwd });
  await store.close();
}

/** The `--store` value among command-line arguments, if any. */
export function storeArg(args: readonly string[]): string | undefined {
  const i = args.indexOf("--store");
  return i < 0 ? undefined : args[i + 1];
}
