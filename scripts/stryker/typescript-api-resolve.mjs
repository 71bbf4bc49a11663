// The resolve hook registered by typescript-api.mjs: `typescript` imported from a Stryker package
// resolves to the `typescript-api` alias (TypeScript 6); every other import is left as it is.
export async function resolve(specifier, context, next) {
  if (specifier === "typescript" && context.parentURL?.includes("/node_modules/@stryker-mutator/"))
    return next("typescript-api", context);
  return next(specifier, context);
}
