// URL rules of agent definitions (docs/spec/definitions.md rules 11 and 12): a URL parses with the WHATWG parser, is
// http or https, has no user-info and a port ≤ 65535, and carries no credential in its query. MCP
// `command`/`args` values that contain a URL get the credential check too.
import type { Problem } from "../result.js";

const SECRET_NAMES = new Set([
  "token",
  "access_token",
  "api_key",
  "apikey",
  "key",
  "secret",
  "password",
  "passwd",
  "sig",
  "signature",
  "auth",
  "authorization",
  "client_secret",
]);

/** Whether a query parameter name looks like a secret (case-insensitive). */
export function isSecretParameter(name: string): boolean {
  const n = name.toLowerCase();
  return SECRET_NAMES.has(n) || n.endsWith("_token") || n.endsWith("_secret") || n.endsWith("_key");
}

function credentialProblems(url: URL, path: string): Problem[] {
  const problems: Problem[] = [];
  if (url.username !== "" || url.password !== "") {
    problems.push({
      code: "definition/credential",
      path,
      message: "URL carries user-info (a credential); remove it and supply credentials at run time",
    });
  }
  const names = new Set(url.searchParams.keys());
  for (const name of names) {
    if (isSecretParameter(name)) {
      problems.push({
        code: "definition/credential",
        path,
        message: `URL query parameter ${JSON.stringify(name)} looks like a secret; remove it`,
      });
    }
  }
  return problems;
}

/** Problems of a URL field (`definition/url`, `definition/credential`); empty when it is fine. */
export function checkUrl(text: string, path: string): Problem[] {
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    return [{ code: "definition/url", path, message: "not a URL the WHATWG URL parser accepts" }];
  }
  const credentials = credentialProblems(url, path);
  if (credentials.length > 0) return credentials;
  if (url.protocol !== "http:" && url.protocol !== "https:") {
    return [
      { code: "definition/url", path, message: `scheme ${url.protocol} is not http or https` },
    ];
  }
  if (url.port !== "" && Number(url.port) > 65535) {
    return [{ code: "definition/url", path, message: "port above 65535" }];
  }
  return [];
}

const URL_IN_TEXT = /[A-Za-z][A-Za-z0-9+.-]*:\/\/[^\s"'<>`]+/g;

/** Credentials in URLs found inside free text (an MCP command or argument). */
export function credentialsInText(text: string, path: string): Problem[] {
  const problems: Problem[] = [];
  for (const m of text.matchAll(URL_IN_TEXT)) {
    let url: URL;
    try {
      url = new URL(m[0]);
    } catch {
      continue;
    }
    problems.push(...credentialProblems(url, path));
  }
  return problems;
}
