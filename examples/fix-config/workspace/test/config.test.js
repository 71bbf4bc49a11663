import assert from "node:assert/strict";
import { test } from "node:test";
import { loadConfig } from "../src/load-config.js";

test("the service's configuration loads", () => {
  const config = loadConfig();
  assert.equal(config.name, "inventory");
  assert.ok(config.port >= 1024);
});
