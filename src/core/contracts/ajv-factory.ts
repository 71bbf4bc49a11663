// The one place Ajv instances are made: for every schema the project compiles at run time (task
// pack argument schemas, tool input schemas, loop scripts) and for the generator of the
// precompiled contract validators (./standalone.ts). The Ajv library itself is loaded on the first
// instance made: a process that compiles nothing never loads it.
import { createRequire } from "node:module";
import type Ajv2020Module from "ajv/dist/2020.js";
import type { ErrorObject, Options, ValidateFunction } from "ajv/dist/2020.js";
import type Ajv07Module from "ajv/dist/ajv.js";
import type addFormatsModule from "ajv-formats";
import type fastUriModule from "fast-uri";
import { CONTRACT_FORMATS } from "./formats.js";

type Ajv2020Class = typeof Ajv2020Module.default;
type Ajv = InstanceType<Ajv2020Class>;

/**
 * What an instance is for:
 * - `contract`: our schemas, strict mode, the contract formats (`urn:` ids resolve);
 * - `contract-loose`: the same with strictTypes/strictRequired off, for schemas that, like the loop
 *   seed, use `required` in if/then/else without `type`;
 * - `tool`, `tool-draft-07`: tool input schemas from definitions and MCP servers, tolerant (unknown
 *   keywords and formats ignored, every ajv-formats format and keyword known);
 * - `schema-check`: only whether a schema compiles as draft 2020-12 (formats not checked).
 */
export type AjvProfile = "contract" | "contract-loose" | "tool" | "tool-draft-07" | "schema-check";

/** A compiled validator: an Ajv-compiled function or a precompiled (standalone) one. */
export interface Validator {
  (data: unknown): boolean;
  errors?: ErrorObject[] | null;
}

interface AjvLibrary {
  readonly Ajv2020: Ajv2020Class;
  readonly Ajv07: typeof Ajv07Module.default;
  readonly addFormats: typeof addFormatsModule.default;
  readonly uriResolver: NonNullable<Options["uriResolver"]>;
}

let library: AjvLibrary | undefined;

/** Ajv and ajv-formats are CommonJS: required synchronously, once, on first use. */
function ajvLibrary(): AjvLibrary {
  if (library === undefined) {
    const require = createRequire(import.meta.url);
    const load = <T>(id: string): T => {
      const m = require(id) as { default?: T };
      return m.default ?? (m as T);
    };
    library = {
      Ajv2020: load("ajv/dist/2020.js"),
      Ajv07: load("ajv/dist/ajv.js"),
      addFormats: load("ajv-formats"),
      uriResolver: urnAwareResolver(load("fast-uri")),
    };
  }
  return library;
}

/**
 * RFC 3986 resolution of a relative reference against a URN base yields a URN without a namespace
 * identifier, which fast-uri refuses to serialise. A relative reference against a URN base resolves
 * to the reference itself; everything else is resolved as usual.
 */
function urnAwareResolver(fastUri: typeof fastUriModule): AjvLibrary["uriResolver"] {
  return {
    parse: fastUri.parse,
    serialize: fastUri.serialize,
    resolve(base: string, path: string): string {
      if (/^urn:/i.test(base) && !/^[a-z][a-z0-9+.-]*:/i.test(path) && !path.startsWith("#")) {
        return path;
      }
      return fastUri.resolve(base, path);
    },
  };
}

const TOLERANT: Options = { strict: false, allErrors: true, logger: false };

/**
 * A fresh Ajv instance for `profile`. `extra` adds constructor options (the standalone generator
 * asks for source code).
 */
export function createAjv(profile: AjvProfile = "contract", extra: Options = {}): Ajv {
  const { Ajv2020, Ajv07, addFormats, uriResolver } = ajvLibrary();
  switch (profile) {
    case "contract":
    case "contract-loose": {
      const loose = profile === "contract-loose";
      const ajv = new Ajv2020({
        strict: true,
        strictTypes: !loose,
        strictRequired: !loose,
        allErrors: true,
        uriResolver,
        // Contract patterns use \u escapes and classes that need the unicode flag.
        unicodeRegExp: true,
        ...extra,
      });
      for (const [name, format] of Object.entries(CONTRACT_FORMATS)) {
        ajv.addFormat(name, format as Parameters<Ajv["addFormat"]>[1]);
      }
      ajv.addKeyword({ keyword: "x-dia-status", schemaType: "string" });
      return ajv;
    }
    case "tool":
      return addFormats(new Ajv2020({ ...TOLERANT, ...extra }));
    case "tool-draft-07":
      // Draft-07 and draft 2020-12 instances share the methods callers use.
      return addFormats(new Ajv07({ ...TOLERANT, ...extra }));
    case "schema-check":
      return new Ajv2020({ ...TOLERANT, validateFormats: false, ...extra });
    default: {
      const unknownProfile: never = profile;
      throw new Error(`unknown Ajv profile ${String(unknownProfile)}`);
    }
  }
}

export type { ErrorObject, ValidateFunction };
