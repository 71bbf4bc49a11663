import assert from "node:assert/strict";
import { test } from "node:test";
import { slugify } from "../src/slugify.js";

test("joins words with one hyphen", () => {
  assert.equal(slugify("Hello World"), "hello-world");
});

test("collapses repeated separators", () => {
  assert.equal(slugify("Hello,  World!!"), "hello-world");
  assert.equal(slugify("a -- b"), "a-b");
});

test("folds accented letters to ASCII", () => {
  assert.equal(slugify("Crème Brûlée"), "creme-brulee");
  assert.equal(slugify("Ångström"), "angstrom");
});

test("trims leading and trailing separators", () => {
  assert.equal(slugify("  --Warrant--  "), "warrant");
});
