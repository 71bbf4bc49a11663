// The cached loops (audited-rows.json) are exactly what `built()` writes through the signing store:
// Ed25519 signatures are deterministic and the loop's clock is fixed, so the data cannot drift from
// the code that makes a loop. `UPDATE_AUDITED_ROWS=1` writes the file again after such a change.
import { writeFileSync } from "node:fs";
import { expect, it } from "vitest";
import { built, KEY, NEXT, OTHER, pub } from "./audited-loop.js";
import { type CachedLoops, cachedLoops, ROWS_FILE } from "./audited-rows.js";

it("audited-rows.json holds the loops built() writes, and the public keys of its secret keys", async () => {
  const strip = (b: Awaited<ReturnType<typeof built>>) => ({
    rows: b.rows,
    acts: b.acts,
    proposal: b.proposal,
  });
  const fresh: CachedLoops = {
    failed: strip(await built()),
    verified: strip(await built("verified")),
    keys: { key: await pub(KEY), next: await pub(NEXT), other: await pub(OTHER) },
  };
  const json = `${JSON.stringify(fresh, null, 1)}\n`;
  if (process.env.UPDATE_AUDITED_ROWS === "1") writeFileSync(ROWS_FILE, json);
  expect(cachedLoops()).toEqual(JSON.parse(json));
});
