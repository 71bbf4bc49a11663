import { test } from "node:test";
import { expectText } from "text-expect";
import { titleCase } from "../src/title-case.js";

test("capitalises each word", () => {
  expectText(titleCase("hello world"), "Hello World");
});

test("keeps runs of spaces between words", () => {
  expectText(titleCase("hello  big   world"), "Hello  Big   World");
});

test("an empty text stays empty", () => {
  expectText(titleCase(""), "");
});
