// A task pack's egress allow-list: `host:port` entries parsed into targets, and the address
// classes the egress proxy refuses unless a pack names the host explicitly (docs/spec/containment.md).
// Pure: no name is resolved here.
import { fail, ok, type Problem, type Result } from "../result.js";

export type HostKind = "name" | "ipv4" | "ipv6";

/** One allowed destination: a host (lower case; an IPv6 literal without brackets) and a port. */
export interface NetworkTarget {
  readonly host: string;
  readonly kind: HostKind;
  readonly port: number;
}

export interface NetworkPolicy {
  readonly allow: readonly NetworkTarget[];
  /** Connections open through the egress proxy at once (default DEFAULT_MAX_CONNECTIONS). */
  readonly maxConnections?: number;
}

/** Connections an environment's commands may hold open through its egress proxy at once. */
export const DEFAULT_MAX_CONNECTIONS = 256;

const LABEL = /^[a-z0-9_](?:[a-z0-9_-]{0,61}[a-z0-9_])?$/;

function isName(host: string): boolean {
  if (host.length === 0 || host.length > 253) return false;
  const labels = (host.endsWith(".") ? host.slice(0, -1) : host).split(".");
  // A name made only of digits and dots would read as a (shorthand) IPv4 address: refused.
  if (labels.every((l) => /^[0-9]+$/.test(l))) return false;
  return labels.every((l) => LABEL.test(l));
}

/** The 4 bytes of a dotted-quad IPv4 literal (no shorthand, no leading zeros), else undefined. */
export function parseIpv4(s: string): number[] | undefined {
  const parts = s.split(".");
  if (parts.length !== 4) return undefined;
  const out: number[] = [];
  for (const p of parts) {
    if (!/^(?:0|[1-9][0-9]{0,2})$/.test(p)) return undefined;
    const n = Number(p);
    if (n > 255) return undefined;
    out.push(n);
  }
  return out;
}

/** The 16 bytes of an IPv6 literal (`::` compression, an IPv4 tail; no zone), else undefined. */
export function parseIpv6(s: string): number[] | undefined {
  if (s.length === 0 || s.length > 45 || !/^[0-9a-fA-F:.]+$/.test(s)) return undefined;
  const halves = s.split("::");
  if (halves.length > 2) return undefined;
  const groups = (part: string): number[] | undefined => {
    if (part === "") return [];
    const out: number[] = [];
    const items = part.split(":");
    for (const [i, g] of items.entries()) {
      if (i === items.length - 1 && g.includes(".")) {
        const v4 = parseIpv4(g);
        if (v4 === undefined) return undefined;
        out.push(((v4[0] as number) << 8) | (v4[1] as number));
        out.push(((v4[2] as number) << 8) | (v4[3] as number));
      } else if (/^[0-9a-fA-F]{1,4}$/.test(g)) out.push(Number.parseInt(g, 16));
      else return undefined;
    }
    return out;
  };
  const head = groups(halves[0] as string);
  const tail = halves.length === 2 ? groups(halves[1] as string) : [];
  if (head === undefined || tail === undefined) return undefined;
  let words: number[];
  if (halves.length === 2) {
    const fill = 8 - head.length - tail.length;
    if (fill < 1) return undefined;
    words = [...head, ...new Array<number>(fill).fill(0), ...tail];
  } else words = head;
  if (words.length !== 8) return undefined;
  return words.flatMap((w) => [w >> 8, w & 0xff]);
}

/**
 * A host in canonical form: an IPv4 literal as dotted quad, an IPv6 literal (brackets optional)
 * fully expanded in lower case — an IPv4-mapped one (`::ffff:a.b.c.d`) as its IPv4 address — and
 * a name in lower case without a trailing dot. Undefined when it is none of these.
 */
export function canonicalHost(raw: string): { host: string; kind: HostKind } | undefined {
  const unbracketed = raw.startsWith("[") && raw.endsWith("]") ? raw.slice(1, -1) : raw;
  const v4 = parseIpv4(unbracketed);
  if (v4 !== undefined) return { host: v4.join("."), kind: "ipv4" };
  const v6 = parseIpv6(unbracketed);
  if (v6 !== undefined) {
    if (v6.slice(0, 10).every((b) => b === 0) && v6[10] === 0xff && v6[11] === 0xff) {
      return { host: v6.slice(12).join("."), kind: "ipv4" };
    }
    const words: string[] = [];
    for (let i = 0; i < 16; i += 2) {
      words.push((((v6[i] as number) << 8) | (v6[i + 1] as number)).toString(16));
    }
    return { host: words.join(":"), kind: "ipv6" };
  }
  if (raw !== unbracketed) return undefined;
  const name = raw.toLowerCase();
  if (!isName(name)) return undefined;
  return { host: name.endsWith(".") ? name.slice(0, -1) : name, kind: "name" };
}

/** A port written in decimal without leading zeros, 1–65535; else undefined. */
export function parsePort(s: string): number | undefined {
  if (!/^[1-9][0-9]{0,4}$/.test(s)) return undefined;
  const n = Number(s);
  return n <= 65535 ? n : undefined;
}

/**
 * Parse one allow-list entry `host:port` (`[v6]:port` for an IPv6 literal). Codes:
 * `taskpack/network-entry` (not `host:port`), `taskpack/network-host` (the host is neither a DNS
 * name nor an IP literal), `taskpack/network-port` (not a decimal port 1–65535).
 */
export function parseNetworkEntry(entry: string): Result<NetworkTarget> {
  const bad = (code: string, message: string): Result<NetworkTarget> =>
    fail([{ code, path: "", message: `${JSON.stringify(entry)}: ${message}` }]);
  const colon = entry.lastIndexOf(":");
  if (colon <= 0 || colon === entry.length - 1) {
    return bad("taskpack/network-entry", "an entry is host:port ([address]:port for IPv6)");
  }
  const rawHost = entry.slice(0, colon);
  if (rawHost.includes(":") && !(rawHost.startsWith("[") && rawHost.endsWith("]"))) {
    return bad("taskpack/network-entry", "an IPv6 address is written in brackets: [address]:port");
  }
  const port = parsePort(entry.slice(colon + 1));
  if (port === undefined) return bad("taskpack/network-port", "the port is not 1-65535");
  const host = canonicalHost(rawHost);
  if (host === undefined) {
    return bad("taskpack/network-host", "the host is not a DNS name or an IP address");
  }
  return ok({ ...host, port });
}

/** Parse a pack's `network.allow`; problems point at `<at>/<index>`. */
export function parseNetworkAllow(
  entries: readonly string[],
  at: string,
): { readonly targets: NetworkTarget[]; readonly problems: Problem[] } {
  const targets: NetworkTarget[] = [];
  const problems: Problem[] = [];
  const seen = new Set<string>();
  for (const [i, entry] of entries.entries()) {
    const r = parseNetworkEntry(entry);
    if (!r.ok) {
      for (const e of r.errors) problems.push({ ...e, path: `${at}/${i}` });
      continue;
    }
    const key = targetKey(r.value.host, r.value.port);
    if (seen.has(key)) {
      problems.push({
        code: "taskpack/network-duplicate",
        path: `${at}/${i}`,
        message: `${JSON.stringify(entry)} names ${key} again`,
      });
      continue;
    }
    seen.add(key);
    targets.push(r.value);
  }
  return { targets, problems };
}

/** `host:port` as the allow-list is keyed (IPv6 in brackets). */
export function targetKey(host: string, port: number): string {
  return `${host.includes(":") ? `[${host}]` : host}:${port}`;
}

export type AddressClass =
  | "public"
  | "loopback"
  | "private"
  | "link-local"
  | "unspecified"
  | "cgnat"
  | "unique-local"
  | "multicast"
  | "reserved";

/** The range an IP address (canonical form from canonicalHost) falls in. */
export function addressClass(address: string): AddressClass {
  const c = canonicalHost(address);
  if (c === undefined || c.kind === "name") return "reserved";
  if (c.kind === "ipv4") {
    const [a, b] = c.host.split(".").map(Number) as [number, number];
    if (a === 0) return "unspecified";
    if (a === 127) return "loopback";
    if (a === 10 || (a === 172 && b >= 16 && b <= 31) || (a === 192 && b === 168)) {
      return "private";
    }
    if (a === 169 && b === 254) return "link-local";
    if (a === 100 && b >= 64 && b <= 127) return "cgnat";
    if (a >= 224 && a <= 239) return "multicast";
    if (a >= 240) return "reserved";
    return "public";
  }
  const bytes = parseIpv6(c.host) as number[];
  if (bytes.every((x) => x === 0)) return "unspecified";
  if (bytes.slice(0, 15).every((x) => x === 0) && bytes[15] === 1) return "loopback";
  const first = bytes[0] as number;
  const second = bytes[1] as number;
  if ((first & 0xfe) === 0xfc) return "unique-local";
  if (first === 0xfe && (second & 0xc0) === 0x80) return "link-local";
  if (first === 0xfe && (second & 0xc0) === 0xc0) return "private"; // deprecated site-local
  if (first === 0xff) return "multicast";
  // IPv4-compatible and NAT64/6to4 forms can carry an inner private address: not public.
  if (bytes.slice(0, 12).every((x) => x === 0)) return "reserved";
  if (first === 0x00 && second === 0x64 && bytes[2] === 0xff && bytes[3] === 0x9b) {
    return "reserved";
  }
  if (first === 0x20 && second === 0x02) return "reserved";
  return "public";
}
