/**
 * JSON Schemas (draft 2020-12, the dialect of OpenAPI 3.1) generated from the contract's zod
 * schemas with `z.toJSONSchema`: the contract stays the only place a wire shape is written.
 *
 * Every `…Schema` export of `lib/contract` becomes a component named without the suffix
 * (`ProductSchema` → `Product`), so nested structures are `$ref`s to their own component. Each is
 * generated twice:
 * - **output** (`Product`): what the kit sends. Objects are closed (`additionalProperties: false`),
 *   so a client (or our own tests) can tell when a reply carries anything undocumented.
 * - **input** (`ProductInput`): what the kit accepts. Objects are open: unknown members are
 *   stripped and reported as warnings (`parseWire`), never refused.
 */
import { z } from 'zod';
import * as contract from '../contract';

/** A JSON Schema object (draft 2020-12), as embedded in the OpenAPI document. */
export type JsonSchema = { [keyword: string]: unknown };

export const COMPONENTS_PREFIX = '#/components/schemas/';

/** The zod schemas the components are generated from: every `…Schema` export of the contract. */
function contractSchemas(): Map<z.ZodType, string> {
  const named = new Map<z.ZodType, string>();
  for (const [exportName, value] of Object.entries(contract)) {
    if (!exportName.endsWith('Schema') || !(value instanceof z.ZodType)) continue;
    // An alias of an already named schema keeps the first name (export order is stable).
    if (!named.has(value)) named.set(value, exportName.slice(0, -'Schema'.length));
  }
  // An entity's schemas are named by the contract's exports; an entity registered besides them
  // (`registerEntity`) gets the same names from its own: `Customer`, `CustomerListResponse`, …
  for (const d of contract.ENTITIES.map((e) => contract.entityOf(e))) {
    const plural = d.entity.charAt(0).toUpperCase() + d.entity.slice(1);
    const names: Array<[z.ZodType, string]> = [
      [d.schema, d.title],
      [d.writeBodySchema, `${d.title}WriteBody`],
      [d.reverseSchema, `Reverse${d.title}`],
      [d.listResponseSchema, `${d.title}ListResponse`],
      [d.byIdResponseSchema, `${d.title}ByIdResponse`],
      [d.writeSuccessSchema, `${d.title}WriteSuccess`],
      [d.pulledSchema, `Pulled${d.title}`],
      [d.pushPageSchema, `Push${plural}Page`],
    ];
    for (const [schema, name] of names) if (!named.has(schema)) named.set(schema, name);
  }
  return named;
}

/**
 * Components of one direction. `extra` adds schemas the contract does not export by name but the
 * document needs (derived from contract schemas, e.g. `EntityBodySchema.partial()`).
 */
function generate(io: 'input' | 'output', suffix: string, extra: ReadonlyMap<z.ZodType, string>): Record<string, JsonSchema> {
  const registry = z.registry<{ id: string }>();
  for (const [schema, name] of [...contractSchemas(), ...extra]) {
    if (!registry.has(schema)) registry.add(schema, { id: name + suffix });
  }
  const { schemas } = z.toJSONSchema(registry, {
    target: 'draft-2020-12',
    io,
    unrepresentable: 'throw',
    uri: (id) => COMPONENTS_PREFIX + id,
  }) as { schemas: Record<string, JsonSchema> };
  for (const schema of Object.values(schemas)) {
    // Components live inside the OpenAPI document: no own dialect declaration or base URI.
    delete schema.$schema;
    delete schema.$id;
  }
  return schemas;
}

/** The component names and the JSON Schemas generated for a set of zod schemas. */
export interface GeneratedSchemas {
  /** Every component, output and input forms. */
  readonly components: Record<string, JsonSchema>;
  /** `$ref` to the output (reply) form of a zod schema. */
  reply(schema: z.ZodType): JsonSchema;
  /** `$ref` to the input (request) form of a zod schema. */
  request(schema: z.ZodType): JsonSchema;
  /** The standalone JSON Schema of a small zod schema, inlined. */
  inline(schema: z.ZodType): JsonSchema;
  /** The JSON Schema of a query parameter: the value its text stands for (`offset` is an integer). */
  parameter(schema: z.ZodType): JsonSchema;
}

/**
 * Generates the components: every named contract schema plus `extra` (schema → component name).
 * Unreferenced components are pruned by the document builder.
 */
export function generateSchemas(extra: ReadonlyMap<z.ZodType, string> = new Map()): GeneratedSchemas {
  const names = new Map([...contractSchemas(), ...extra]);
  const output = generate('output', '', extra);
  const input = generate('input', INPUT_SUFFIX, extra);
  const same = sameInBothForms(output, input);
  // Components whose input form is the output form (no object inside) are written once.
  const components: Record<string, JsonSchema> = { ...output };
  for (const [name, schema] of Object.entries(input)) {
    if (!same.has(name.slice(0, -INPUT_SUFFIX.length))) components[name] = renameRefs(schema, same) as JsonSchema;
  }
  const refTo = (schema: z.ZodType, suffix: string): JsonSchema => {
    const name = names.get(schema);
    if (name === undefined) throw new Error('internal: a schema of the OpenAPI document is not a named contract schema');
    return { $ref: COMPONENTS_PREFIX + name + (same.has(name) ? '' : suffix) };
  };
  return {
    components,
    reply: (schema) => refTo(schema, ''),
    request: (schema) => refTo(schema, 'Input'),
    inline: (schema) => standalone(schema, 'input'),
    parameter: (schema) => standalone(schema, 'output'),
  };
}

const INPUT_SUFFIX = 'Input';

function standalone(schema: z.ZodType, io: 'input' | 'output'): JsonSchema {
  const out = z.toJSONSchema(schema, { target: 'draft-2020-12', io, unrepresentable: 'throw' }) as JsonSchema;
  delete out.$schema;
  return out;
}

/** Names whose input component equals the output one once `…Input` references are read as plain ones. */
function sameInBothForms(output: Record<string, JsonSchema>, input: Record<string, JsonSchema>): Set<string> {
  const all = new Set(Object.keys(output));
  const plain = (v: unknown) => JSON.stringify(renameRefs(v, all));
  const candidates = new Set([...all].filter((n) => input[n + INPUT_SUFFIX] && plain(input[n + INPUT_SUFFIX]) === JSON.stringify(output[n])));
  // Equal text is not enough when a referenced component differs between the forms: iterate to a fixed point.
  for (let changed = true; changed; ) {
    changed = false;
    for (const name of candidates) {
      const refs = referencedComponents(output[name], {});
      if ([...refs].some((r) => !candidates.has(r))) {
        candidates.delete(name);
        changed = true;
      }
    }
  }
  return candidates;
}

/** A copy of `value` with `$ref`s to `XInput` turned into `X` for every `X` in `names`. */
function renameRefs(value: unknown, names: ReadonlySet<string>): unknown {
  if (Array.isArray(value)) return value.map((v) => renameRefs(v, names));
  if (!value || typeof value !== 'object') return value;
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(value)) {
    if (k === '$ref' && typeof v === 'string' && v.endsWith(INPUT_SUFFIX) && names.has(v.slice(COMPONENTS_PREFIX.length, -INPUT_SUFFIX.length))) {
      out[k] = v.slice(0, -INPUT_SUFFIX.length);
    } else out[k] = renameRefs(v, names);
  }
  return out;
}

/** Names of the components a value refers to (`$ref`s, followed through the components). */
export function referencedComponents(root: unknown, components: Record<string, JsonSchema>): Set<string> {
  const seen = new Set<string>();
  const stack: unknown[] = [root];
  while (stack.length > 0) {
    const v = stack.pop();
    if (Array.isArray(v)) stack.push(...v);
    else if (v && typeof v === 'object') {
      for (const [k, child] of Object.entries(v)) {
        if (k === '$ref' && typeof child === 'string' && child.startsWith(COMPONENTS_PREFIX)) {
          const name = child.slice(COMPONENTS_PREFIX.length);
          if (!seen.has(name)) {
            seen.add(name);
            stack.push(components[name]);
          }
        } else stack.push(child);
      }
    }
  }
  return seen;
}
