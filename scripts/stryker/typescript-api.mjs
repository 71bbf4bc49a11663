// Loaded into Stryker's type-checker process (`checkerNodeArgs` in stryker.config.mjs). The
// project compiles with TypeScript 7, whose package has no JavaScript compiler API; the checker
// plugin needs that API, so its `import "typescript"` is answered with `typescript-api`
// (TypeScript 6, a dev dependency under that alias). Nothing else is redirected.
import { register } from "node:module";

register("./typescript-api-resolve.mjs", import.meta.url);
