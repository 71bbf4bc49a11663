// A Stryker ignorer (`ignorers: ["warrant-messages"]` in stryker.config.mjs): the human-readable
// text of a refusal is not mutated; its code, its path and the condition that raises it are. A
// mutant that only rewrites a message's wording would otherwise count as a survivor in every check
// whose tests (rightly) assert the code and where, not the prose. The text is reached only as
// the argument of a refusal builder (by name and position) or as the `message` of an object.
import { declareValuePlugin, PluginKind } from "@stryker-mutator/api/plugin";

/** Refusal builders by name: the positions of their message arguments. */
const MESSAGE_ARGS = new Map([
  ["add", [2]], // Findings.add(at, code, message)
  ["problem", [2]], // problem(code, path, message)
  ["WarrantError", [1]], // new WarrantError(code, message, where)
  ["bad", [1]], // bad(path, message)
  ["missing", [0]], // missing(message)
  ["mismatch", [0]], // mismatch(message)
  ["failed", [1]], // failed(query, what, path)
  ["refusal", [2]], // refusal(status, code, message)
  ["refusalOf", [1]], // refusalOf(code, message)
  ["Error", [0]], // new Error(message), its code set beside it
]);

/**
 * Builders whose message follows a literal refusal code: `refused("loop/not-open", message)` in the
 * loop decider, `refuse("loop/limits-invalid", message)` in effective limits. Only when the first
 * argument is such a code (other functions of these names take something else there).
 */
const AFTER_CODE = new Set(["refused", "refuse"]);
const CODE = /^[a-z][a-z-]*\/[a-z][a-z-]*$/;

/**
 * The literal a node stands for, seen through Stryker's own wrapping: by the time an argument is
 * visited, the one before it may already carry its mutants (`stryMutAct(…) ? "" : (stryCov(…), "x")`).
 */
function literalOf(node) {
  let n = node;
  for (let i = 0; i < 4 && n !== undefined; i++) {
    if (n.type === "StringLiteral") return n.value;
    if (n.type === "ConditionalExpression") n = n.alternate;
    else if (n.type === "SequenceExpression") n = n.expressions.at(-1);
    else if (n.type === "ParenthesizedExpression") n = n.expression;
    else return undefined;
  }
  return undefined;
}

function calleeName(callee) {
  if (callee.type === "Identifier") return callee.name;
  if (callee.type === "MemberExpression" && callee.property.type === "Identifier")
    return callee.property.name;
  return undefined;
}

export const strykerPlugins = [
  declareValuePlugin(PluginKind.Ignore, "warrant-messages", {
    shouldIgnore(path) {
      const parent = path.parentPath;
      if (parent === null) return undefined;
      if (
        parent.isObjectProperty() &&
        path.key === "value" &&
        !parent.node.computed &&
        parent.node.key.type === "Identifier" &&
        parent.node.key.name === "message"
      )
        return "the text of a message (its code and path are mutated)";
      if ((parent.isCallExpression() || parent.isNewExpression()) && path.listKey === "arguments") {
        const name = calleeName(parent.node.callee);
        if (name !== undefined && MESSAGE_ARGS.get(name)?.includes(path.key))
          return "the text of a message (its code and path are mutated)";
        const code = path.key === 1 ? literalOf(parent.node.arguments[0]) : undefined;
        if (AFTER_CODE.has(name) && code !== undefined && CODE.test(code))
          return "the text of a message (its code and path are mutated)";
      }
      return undefined;
    },
  }),
];
