// The Host values the console answers to: a page served from any other name (a DNS-rebinding
// domain that resolves to loopback) is refused before it can read or act on anything.
// Pure: values are normalized as the WHATWG URL parser writes a URL's host (lower case, IPv6 in
// brackets, the default port 80 left out), so the handler compares them with `new URL(…).host`.

/** `value` (a Host header, `NAME[:PORT]`) as `new URL` writes its host; undefined when malformed. */
export function normalizeHost(value: string): string | undefined {
  if (!/^[A-Za-z0-9._~:[\]-]+$/.test(value)) return undefined;
  try {
    const u = new URL(`http://${value}`);
    if (u.username !== "" || u.password !== "" || u.pathname !== "/") return undefined;
    return u.host;
  } catch {
    return undefined;
  }
}

/** `NAME`, `NAME:PORT`, `[IPV6]` or `[IPV6]:PORT`: the name and the port when one is given. */
const HOST_PORT = /^(\[[0-9A-Fa-f:.]+\]|[A-Za-z0-9._~-]+)(?::(\d{1,5}))?$/;

/** One `--allow-host` value: a name, and the port it comes with (else the console's own). */
export interface AllowHost {
  readonly name: string;
  readonly port?: number;
}

/** An `--allow-host` value (`NAME`, `NAME:PORT`); undefined when it is not a host name or address. */
export function parseAllowHost(value: string): AllowHost | undefined {
  const m = HOST_PORT.exec(value);
  if (m === null) return undefined;
  const name = m[1] as string;
  const port = m[2] === undefined ? undefined : Number(m[2]);
  if (port !== undefined && port > 65535) return undefined;
  if (normalizeHost(`${name}:${port ?? 1}`) === undefined) return undefined;
  return port === undefined ? { name } : { name, port };
}

/**
 * The Host values a console bound to `bind` on `port` answers to: the bound address itself; on a
 * loopback address also `localhost` (and for `localhost`, `127.0.0.1` and `[::1]`); on a wildcard
 * address (`0.0.0.0`; `::`, which takes IPv4 too) the loopback names it is reached through; then
 * each of `extra` (`--allow-host`: NAME on `port`, NAME:PORT as given). Any other name (the
 * machine's name, a proxy's) needs `--allow-host`.
 */
export function consoleHosts(
  bind: string,
  port: number,
  extra: readonly AllowHost[] = [],
): string[] {
  const names = [bind.includes(":") ? `[${bind}]` : bind];
  if (bind === "localhost") names.push("127.0.0.1", "[::1]");
  else if (bind === "::1" || /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(bind)) names.push("localhost");
  else if (bind === "0.0.0.0") names.push("localhost", "127.0.0.1");
  else if (bind === "::") names.push("localhost", "127.0.0.1", "[::1]");
  const hosts = [
    ...names.map((n) => normalizeHost(`${n}:${port}`)),
    ...extra.map((h) => normalizeHost(`${h.name}:${h.port ?? port}`)),
  ];
  return [...new Set(hosts.filter((h): h is string => h !== undefined))];
}
