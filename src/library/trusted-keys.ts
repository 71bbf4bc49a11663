// The keys a checker trusts, held outside every store: `--key` (a public key, or a key file), or a
// trusted-keys file — by default `trusted-keys` in Warrant's config folder, when it exists. Each
// line of the file holds a public key (43 base64url characters), optionally followed by a name;
// blank lines and lines starting with `#` are skipped. A loop whose host key is one of them is
// pinned; one signed by another key is refused.
import { existsSync, readFileSync, statSync } from "node:fs";
import path from "node:path";
import { legacyKeyDir, trustedKeysFile } from "../adapters/fs/host-key.js";
import type { TrustAnchor } from "../core/loop/audit.js";
import { base64url } from "../core/records/canonical.js";
import { publicKeyOf } from "../core/records/signature.js";
import { WarrantError } from "../core/result.js";

type Env = Readonly<Record<string, string | undefined>>;

const PUBLIC_KEY = /^[A-Za-z0-9_-]{43}$/;
/** A trusted-keys file is small: this bounds what is read of a hostile one. */
const MAX_FILE_BYTES = 1 << 20;

/** The trusted public keys of a file (`audit/trusted-keys-invalid` naming the line at fault). */
export function readTrustedKeys(file: string): TrustAnchor {
  const absolute = path.resolve(file);
  let text: string;
  try {
    if (statSync(absolute).size > MAX_FILE_BYTES) throw new Error("larger than 1 MiB");
    text = readFileSync(absolute, "utf8");
  } catch (e) {
    throw new WarrantError(
      "audit/trusted-keys-invalid",
      `cannot read the trusted-keys file ${absolute}: ${(e as Error).message}`,
    );
  }
  const keys: string[] = [];
  for (const [i, raw] of text.split("\n").entries()) {
    const line = raw.trim();
    if (line === "" || line.startsWith("#")) continue;
    const key = line.split(/\s+/)[0] ?? "";
    if (!PUBLIC_KEY.test(key))
      throw new WarrantError(
        "audit/trusted-keys-invalid",
        `${absolute}:${i + 1}: not a public key (43 base64url characters, then an optional name)`,
      );
    keys.push(key);
  }
  return { keys, source: absolute };
}

/** The default trusted-keys file's keys, when the file exists. */
export function defaultTrustedKeys(env: Env = process.env): TrustAnchor | undefined {
  const file = trustedKeysFile(env);
  return existsSync(file) ? readTrustedKeys(file) : undefined;
}

/**
 * The public key `--key` names: 43 base64url characters, or a key file (a 32-byte private key, or
 * a text file holding the public key). `audit/key-invalid` when it is neither.
 */
export async function publicKeyNamed(given: string): Promise<string> {
  if (PUBLIC_KEY.test(given)) return given;
  let bytes: Buffer;
  try {
    if (statSync(given).size > 4096) throw new Error("larger than 4 KiB");
    bytes = readFileSync(given);
  } catch (e) {
    throw new WarrantError(
      "audit/key-invalid",
      `--key ${given} is neither a public key nor a readable key file (${(e as Error).message})`,
    );
  }
  if (bytes.length === 32) return base64url(await publicKeyOf(new Uint8Array(bytes)));
  const text = bytes.toString("utf8").trim();
  if (PUBLIC_KEY.test(text)) return text;
  throw new WarrantError(
    "audit/key-invalid",
    `${given} holds neither a 32-byte key nor a public key`,
  );
}

/**
 * `audit/anchor-in-store` when `file` lies in the folder of a SQLite store: whoever can change the
 * store can change it, so it cannot pin the store's loops.
 */
export function refuseInsideStore(file: string, storeUri: string): void {
  if (!storeUri.startsWith("sqlite:") || PUBLIC_KEY.test(file)) return;
  const folder = legacyKeyDir(storeUri);
  const rel = path.relative(folder, path.resolve(file));
  if (rel !== "" && !rel.startsWith("..") && !path.isAbsolute(rel))
    throw new WarrantError(
      "audit/anchor-in-store",
      `${file} lies in the store's folder ${folder}: whoever can change the store can change it, so it pins nothing; keep trusted keys outside the store`,
    );
}
