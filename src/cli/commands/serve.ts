// `warrant serve`: the operator console (HTTP API, live events, web UI) over a store, on loopback
// unless told otherwise. The first line on stdout is the console's URL with its bearer token. It
// answers only to its own Host names (the bound address, the loopback names that reach it, and each
// `--allow-host`), and takes state-changing requests only from the matching origins. With
// `--operators FILE` each person has a token of their own and their acts are recorded by name; the
// first line is then the console's URL without a token, and each token made now follows once.
import { randomBytes } from "node:crypto";
import { fileURLToPath } from "node:url";
import type { Command } from "commander";
import type { Warrant } from "../../library/create-warrant.js";
import { isWarrantError } from "../../library/errors.js";
import {
  CONSOLE_TOKEN,
  loadOperatorTokens,
  type OperatorTokens,
} from "../../library/operator-tokens.js";
import { type AllowHost, consoleHosts, parseAllowHost } from "../../server/allowed-hosts.js";
import { operatorOf } from "../act-reply.js";
import { withWarrant } from "../compose.js";
import { err, out, UsageError } from "../io.js";
import { STORE_OPTION, STORE_OPTION_HELP } from "../store-option.js";

interface ServeFlags {
  readonly store?: string;
  readonly host: string;
  readonly port: string;
  readonly token?: string;
  readonly json?: boolean;
  readonly allowHost: readonly string[];
  readonly operators?: string;
}

/** The operators file, read (tokens made for names without one); a bad file is a usage error. */
function operatorsOf(file: string): OperatorTokens {
  try {
    return loadOperatorTokens(file, { defaultOperator: operatorOf(undefined) });
  } catch (e) {
    if (isWarrantError(e)) throw new UsageError(e.message, e.code);
    throw e;
  }
}

function isLoopback(host: string): boolean {
  return host === "localhost" || host === "::1" || /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(host);
}

const collect = (value: string, previous: readonly string[]): string[] => [...previous, value];

function hostInUrl(host: string): string {
  return host.includes(":") ? `[${host}]` : host;
}

/** What the flags ask for, checked before the store is opened. */
interface ServeSettings {
  readonly port: number;
  readonly token: string;
  readonly people: OperatorTokens | undefined;
  readonly allowHosts: readonly AllowHost[];
}

/** The flags checked: a bad port, token, token with operators, or --allow-host is a usage error. */
function settingsOf(o: ServeFlags): ServeSettings {
  const port = Number(o.port);
  if (!Number.isInteger(port) || port < 0 || port > 65535)
    throw new UsageError("--port takes an integer from 0 to 65535");
  if (o.token !== undefined && !CONSOLE_TOKEN.test(o.token))
    throw new UsageError("--token takes 16 to 256 of A-Z a-z 0-9 . _ ~ -");
  if (o.token !== undefined && o.operators !== undefined)
    throw new UsageError(
      "--token and --operators exclude each other: with --operators each person has a token",
    );
  const people = o.operators === undefined ? undefined : operatorsOf(o.operators);
  const token = o.token ?? randomBytes(24).toString("base64url");
  const allowHosts: AllowHost[] = [];
  for (const h of o.allowHost) {
    const parsed = parseAllowHost(h);
    if (parsed === undefined)
      throw new UsageError(`--allow-host takes NAME or NAME:PORT, not ${JSON.stringify(h)}`);
    allowHosts.push(parsed);
  }
  return { port, token, people, allowHosts };
}

/** A token made now for an operator: shown this once with its URL. */
interface MadeToken {
  readonly operator: string;
  readonly url: string;
}

/** The console's URL on stdout (or its JSON), then on stderr who may sign in and what it answers. */
function announce(
  o: ServeFlags,
  warrant: Warrant,
  s: ServeSettings,
  at: { readonly url: string; readonly port: number; readonly hosts: readonly string[] },
  made: readonly MadeToken[],
): void {
  const { people } = s;
  const { url, hosts } = at;
  out(
    o.json === true
      ? JSON.stringify({
          url,
          host: o.host,
          port: at.port,
          store: warrant.store.uri,
          ...(people === undefined
            ? {}
            : { operators: people.operators.map((p) => p.name), generated: made }),
        })
      : url,
  );
  if (o.json !== true) for (const m of made) out(`${m.operator} ${m.url}`);
  if (people !== undefined) {
    err(
      `warrant: serve: ${people.operators.length} operator(s) from ${people.file}, each ` +
        `with their own token${made.length === 0 ? "" : `; the ${made.length} new token(s) above are shown only this once`}`,
    );
    if (people.readableByOthers && made.length === 0)
      err(`warrant: warning: ${people.file} may be read by other users: chmod 600 it`);
  }
  if (!isLoopback(o.host))
    err(
      `warrant: serve: listening on ${o.host}, not loopback: anyone who can reach it and ` +
        "has the token can approve mutations; the traffic is plain HTTP",
    );
  err(`warrant: serve: answering to Host ${hosts.join(", ")} (--allow-host NAME adds one)`);
  err(`warrant: serving ${warrant.store.uri}; stop with Ctrl-C`);
}

/** Serves the console over `warrant` until SIGINT or SIGTERM. */
async function serve(warrant: Warrant, o: ServeFlags, s: ServeSettings): Promise<void> {
  const { people, token, port, allowHosts } = s;
  if (warrant.store.changeFeed === undefined)
    err(`warrant: ${warrant.store.uri} keeps no change feed: /api/events is unavailable`);
  let hosts: string[] = [];
  let origins: string[] = [];
  // The console and its server, loaded when it is served (not when help lists the command).
  const { createConsoleHandler } = await import("../../server/console-handler.js");
  const { mountFetchHandler } = await import("../../server/node-server.js");
  const handler = createConsoleHandler({
    warrant,
    ...(people === undefined
      ? { token }
      : { operators: people.operators.map((p) => ({ name: p.name, token: p.token })) }),
    get origins() {
      return origins;
    },
    get hosts() {
      return hosts;
    },
    assetsDir: fileURLToPath(new URL("../../../web/", import.meta.url)),
  });
  const server = await mountFetchHandler((r) => handler.fetch(r), o.host, port);
  // The console is up: the tokens made now are kept, then shown (once).
  try {
    people?.save();
  } catch (e) {
    await handler.close();
    await server.close();
    throw e;
  }
  const base = `http://${hostInUrl(o.host)}:${server.port}`;
  hosts = consoleHosts(o.host, server.port, allowHosts);
  origins = hosts.map((h) => `http://${h}`);
  const url = people === undefined ? `${base}/#token=${token}` : `${base}/`;
  // Each token made now, shown this once (the file keeps it): NAME's URL with its token.
  const made: MadeToken[] = (people?.operators ?? [])
    .filter((p) => p.generated)
    .map((p) => ({ operator: p.name, url: `${base}/#token=${p.token}` }));
  announce(o, warrant, s, { url, port: server.port, hosts }, made);
  await new Promise<void>((resolve) => {
    process.once("SIGINT", resolve);
    process.once("SIGTERM", resolve);
  });
  await handler.close();
  await server.close();
}

export function registerServeCommand(program: Command): void {
  program
    .command("serve")
    .description(
      "serve the operator console (HTTP API, live events, web UI) over the store; prints its URL",
    )
    .option(STORE_OPTION, STORE_OPTION_HELP)
    .option(
      "--host <host>",
      "the address to bind (another than loopback is warned about)",
      "127.0.0.1",
    )
    .option("--port <port>", "the port (0: any free port)", "7777")
    .option("--token <token>", "the bearer token (16+ of A-Z a-z 0-9 . _ ~ -; default: random)")
    .option(
      "--operators <file>",
      'a JSON map of operator name to token ({"alice": null, …}): each person signs in with ' +
        "their own token and their acts are recorded by name; a name without a token, or a file " +
        "that does not exist (then: the login name), gets one, written back (mode 0600) and printed " +
        "once",
    )
    .option(
      "--allow-host <host>",
      "also answer to this Host (NAME on the console's port, or NAME:PORT); repeatable; " +
        "without it only the bound address and the loopback names that reach it are answered",
      collect,
      [],
    )
    .option(
      "--json",
      "machine output: the first line is {url, host, port, store} instead of the URL",
    )
    .action(async (o: ServeFlags) => {
      const settings = settingsOf(o);
      await withWarrant(o.store, {}, (warrant) => serve(warrant, o, settings));
    });
}
