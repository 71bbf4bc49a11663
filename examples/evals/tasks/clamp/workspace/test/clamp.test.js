import assert from "node:assert/strict";
import { test } from "node:test";
import { clamp } from "../src/clamp.js";

test("inside", () => assert.equal(clamp(5, 0, 10), 5));
test("below", () => assert.equal(clamp(-3, 0, 10), 0));
test("above", () => assert.equal(clamp(12, 0, 10), 10));
