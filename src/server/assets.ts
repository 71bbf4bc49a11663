// The console's page: index.html, app.js and app.css from the built UI's folder, each with its type
// and a content security policy that loads nothing from elsewhere; any other path is 404.
import { readFile } from "node:fs/promises";
import path from "node:path";

const ASSETS: Readonly<Record<string, string>> = {
  "/": "index.html",
  "/index.html": "index.html",
  "/app.js": "app.js",
  "/app.css": "app.css",
};
const ASSET_TYPES: Readonly<Record<string, string>> = {
  ".html": "text/html; charset=utf-8",
  ".js": "text/javascript; charset=utf-8",
  ".css": "text/css; charset=utf-8",
};

const notFound = (text: string) =>
  new Response(text, { status: 404, headers: { "content-type": "text/plain" } });

/** The asset `pathname` names, from `assetsDir` (absent: the API only, every asset 404). */
export async function asset(pathname: string, assetsDir: string | undefined): Promise<Response> {
  const name = ASSETS[pathname];
  if (name === undefined || assetsDir === undefined) return notFound("not found\n");
  try {
    const content = await readFile(path.join(assetsDir, name));
    return new Response(content, {
      headers: {
        "content-type": ASSET_TYPES[path.extname(name)] ?? "application/octet-stream",
        "cache-control": "no-cache",
        "x-content-type-options": "nosniff",
        "content-security-policy":
          "default-src 'self'; script-src 'self'; style-src 'self'; connect-src 'self'; img-src 'self' data:; frame-ancestors 'none'",
        "referrer-policy": "no-referrer",
      },
    });
  } catch {
    return notFound("the console UI is not built (npm run build)\n");
  }
}
