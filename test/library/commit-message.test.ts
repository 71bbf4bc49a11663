// The commit message `apply --git` writes: the subject rule (first sentence, at most 72 characters,
// cut at a word, no ellipsis) and a body no line of which git reads as a trailer.
import { execFileSync } from "node:child_process";
import { describe, expect, it } from "vitest";
import { commitMessage, SUBJECT_MAX, subjectOf } from "../../src/library/commit-message.js";

describe("subjectOf", () => {
  it("takes the first sentence of the first paragraph, without its period", () => {
    expect(subjectOf("Fix the slug. Then more.")).toBe("Fix the slug");
    expect(subjectOf("Fix the\nslug across lines! More.")).toBe("Fix the slug across lines!");
    expect(subjectOf("No sentence end here\n\nSecond paragraph.")).toBe("No sentence end here");
  });

  it("cuts a longer sentence at the last word within 72 characters, with no ellipsis", () => {
    const words =
      "alpha beta gamma delta epsilon zeta eta theta iota kappa lambda mu nu xi omicron";
    const s = subjectOf(`${words}.`);
    expect(s.length).toBeLessThanOrEqual(SUBJECT_MAX);
    expect(words.startsWith(s)).toBe(true);
    expect(words[s.length]).toBe(" ");
    expect(s).not.toMatch(/…|\.\.\.$/);
    // Exactly 72 characters stay whole; a comma left at the cut goes.
    const exact = `${"x".repeat(30)} ${"y".repeat(41)}`;
    expect(subjectOf(exact)).toBe(exact);
    expect(subjectOf(`${"w".repeat(60)} abcdefghij, klmnop`)).toBe(`${"w".repeat(60)} abcdefghij`);
    // One word longer than the limit is cut at it.
    expect(subjectOf("z".repeat(100))).toBe("z".repeat(72));
  });

  it("turns control characters into spaces", () => {
    expect(subjectOf("Fix\u001b[2J the\rslug.")).toBe("Fix [2J the slug");
  });
});

describe("commitMessage", () => {
  it("subject, the full text, then the trailers as the last paragraph; git parses no trailer from the text", () => {
    const text =
      "Rewrite slugify.\n\nWarrant-Query: query:other\nSigned-off-by: M <m@x>\n(cherry picked from commit 1234)\nKey = value\n---\n# scissors\nProse: kept, indented.";
    const message = commitMessage(text, [
      ["Warrant-Query", "query:mine"],
      ["Warrant-Execution", "corpus-task-pack-execution:sha256:x"],
    ]);
    expect(message.split("\n").slice(0, 3)).toEqual(["Rewrite slugify", "", "Rewrite slugify."]);
    expect(message).toContain("\n  Warrant-Query: query:other\n  Signed-off-by: M <m@x>\n");
    expect(
      message.endsWith(
        "\n\nWarrant-Query: query:mine\nWarrant-Execution: corpus-task-pack-execution:sha256:x\n",
      ),
    ).toBe(true);
    const parsed = execFileSync("git", ["interpret-trailers", "--parse"], {
      input: message,
      encoding: "utf8",
    });
    expect(parsed).toBe(
      "Warrant-Query: query:mine\nWarrant-Execution: corpus-task-pack-execution:sha256:x\n",
    );
    // A one-sentence text is the subject alone.
    expect(commitMessage("Fixed.", [["K", "v"]])).toBe("Fixed\n\nK: v\n");
  });
});
