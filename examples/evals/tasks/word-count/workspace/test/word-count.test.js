import assert from "node:assert/strict";
import { test } from "node:test";
import { wordCount } from "../src/word-count.js";

test("single spaces", () => assert.equal(wordCount("a b c"), 3));
test("repeated spaces", () => assert.equal(wordCount("a  b   c"), 3));
test("tabs and newlines", () => assert.equal(wordCount("a\tb\nc"), 3));
test("empty", () => assert.equal(wordCount(""), 0));
