import assert from "node:assert/strict";
import { test } from "node:test";
import { median } from "../src/median.js";

test("odd length", () => assert.equal(median([3, 1, 2]), 2));
test("even length", () => assert.equal(median([4, 1, 3, 2]), 2.5));
test("numbers of different widths", () => assert.equal(median([10, 9, 2]), 9));
