/**
 * Requests made up from the spec, for the property-based checks
 * (properties.test.ts), with fast-check: for any JSON Schema of the bundled
 * spec, an arbitrary of values it accepts; and for a request body, ways to
 * break it (a missing required field, a field of the wrong type, a field
 * the schema does not allow) that the server must refuse.
 */
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import fc from 'fast-check';

export type Json = Record<string, unknown>;
export const spec = JSON.parse(readFileSync(resolve(import.meta.dirname, '../../generated/openapi.json'), 'utf8')) as Json & { paths: Record<string, Json> };

/** Follows local $refs (`#/components/...`). */
export function deref<T = Json>(node: unknown): T {
  let current = node as Json;
  while (current && typeof current.$ref === 'string') {
    current = (current.$ref as string)
      .slice(2)
      .split('/')
      .map((segment) => segment.replace(/~1/g, '/').replace(/~0/g, '~'))
      .reduce<Json>((at, segment) => at[segment] as Json, spec);
  }
  return current as T;
}

/** A schema with its single-branch allOf merged in (the spec uses allOf to add a description to a $ref). */
function flatten(schema: Json): Json {
  const node = deref(schema);
  if (!Array.isArray(node.allOf)) return node;
  const { allOf, ...rest } = node;
  // The schema's own keywords win over its parts'; properties and required add up.
  const parts = (allOf as Json[]).map(flatten);
  const merged: Json = Object.assign({}, ...parts, rest);
  merged.properties = Object.assign({}, ...parts.map((part) => part.properties as Json), rest.properties as Json);
  merged.required = [...parts.flatMap((part) => (part.required as string[]) ?? []), ...((rest.required as string[]) ?? [])];
  return merged;
}

/** Text without NUL or control characters (the server refuses NUL anywhere, as its spec says), with some that are not ASCII. */
const TEXT_UNITS = fc.constantFrom(...'abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789 -_.,!?éüñ—音♪'.split(''));

function stringArbitrary(schema: Json): fc.Arbitrary<string> {
  const minLength = (schema.minLength as number | undefined) ?? 0;
  const maxLength = Math.min((schema.maxLength as number | undefined) ?? minLength + 24, minLength + 24);
  if (typeof schema.pattern === 'string') {
    const pattern = new RegExp(schema.pattern as string);
    return fc.stringMatching(pattern).filter((value) => value.length >= minLength && value.length <= ((schema.maxLength as number | undefined) ?? Infinity) && !value.includes('\0'));
  }
  switch (schema.format) {
    case 'email':
      return fc.emailAddress().filter((value) => value.length <= ((schema.maxLength as number | undefined) ?? 254));
    case 'uri':
      return fc.webUrl({ validSchemes: ['https'] });
    case 'date-time':
      return fc.date({ min: new Date('2000-01-01'), max: new Date('2100-01-01'), noInvalidDate: true }).map((date) => date.toISOString());
    default:
      return fc.string({ unit: TEXT_UNITS, minLength, maxLength });
  }
}

/** Values the schema accepts. */
export function arbitraryOf(input: unknown, depth = 0): fc.Arbitrary<unknown> {
  const schema = flatten(input as Json);
  if ('const' in schema) return fc.constant(schema.const);
  if (Array.isArray(schema.enum)) return fc.constantFrom(...(schema.enum as unknown[]));
  for (const key of ['oneOf', 'anyOf'] as const) {
    if (Array.isArray(schema[key])) return fc.oneof(...(schema[key] as Json[]).map((branch) => arbitraryOf({ ...schema, [key]: undefined, ...flatten(branch) }, depth + 1)));
  }
  const types = Array.isArray(schema.type) ? (schema.type as string[]) : [schema.type as string | undefined];
  if (types.length > 1) return fc.oneof(...types.map((type) => arbitraryOf({ ...schema, type }, depth + 1)));
  switch (types[0]) {
    case 'null':
      return fc.constant(null);
    case 'boolean':
      return fc.boolean();
    case 'integer':
      return fc.integer({
        min: (schema.minimum as number | undefined) ?? (schema.exclusiveMinimum as number | undefined ?? -1_000_001) + 1,
        max: (schema.maximum as number | undefined) ?? (schema.exclusiveMaximum as number | undefined ?? 1_000_001) - 1,
      });
    case 'number':
      return fc.double({ min: (schema.minimum as number | undefined) ?? -1e6, max: (schema.maximum as number | undefined) ?? 1e6, noNaN: true, noDefaultInfinity: true });
    case 'string':
      return stringArbitrary(schema);
    case 'array': {
      const items = arbitraryOf(schema.items ?? {}, depth + 1);
      const constraints = { minLength: (schema.minItems as number | undefined) ?? 0, maxLength: Math.min((schema.maxItems as number | undefined) ?? 3, 3) };
      return schema.uniqueItems ? fc.uniqueArray(items, { ...constraints, selector: (value) => JSON.stringify(value) }) : fc.array(items, constraints);
    }
    case 'object':
    case undefined: {
      const properties = (schema.properties as Record<string, Json> | undefined) ?? {};
      const required = ((schema.required as string[] | undefined) ?? []).filter((name) => name in properties);
      // Deep optional structures are cut off, so that a body stays small; what is required is always there.
      const optional = depth > 3 ? [] : Object.keys(properties).filter((name) => !required.includes(name));
      const model = Object.fromEntries([...required, ...optional].map((name) => [name, arbitraryOf(properties[name], depth + 1)]));
      const { minProperties, maxProperties } = schema as { minProperties?: number; maxProperties?: number };
      if (minProperties === undefined && maxProperties === undefined) return fc.record(model, { requiredKeys: required });
      // A count of properties to keep to: which optional ones are there is chosen first.
      const chosen = fc.subarray(optional, { minLength: Math.max(0, (minProperties ?? 0) - required.length), maxLength: Math.max(0, (maxProperties ?? optional.length + required.length) - required.length) });
      return chosen.chain((names) => fc.record(Object.fromEntries([...required, ...names].map((name) => [name, model[name]]))));
    }
    default:
      return fc.constant(null);
  }
}

/** The JSON types a schema accepts, or undefined when it accepts anything. */
function acceptedTypes(input: unknown): Set<string> | undefined {
  const schema = flatten(input as Json);
  if ('const' in schema || Array.isArray(schema.enum)) return new Set(['__const__']);
  for (const key of ['oneOf', 'anyOf'] as const) {
    if (Array.isArray(schema[key])) {
      const all = new Set<string>();
      for (const branch of schema[key] as Json[]) {
        const types = acceptedTypes(branch);
        if (!types) return undefined;
        for (const type of types) all.add(type);
      }
      return all;
    }
  }
  if (schema.type === undefined) return schema.properties ? new Set(['object']) : undefined;
  const types = new Set(Array.isArray(schema.type) ? (schema.type as string[]) : [schema.type as string]);
  if (types.has('number')) types.add('integer');
  return types;
}

/** A value of a JSON type the schema does not accept, or undefined when it accepts every type. */
function wrongTypeFor(input: unknown): unknown {
  const types = acceptedTypes(input);
  if (!types) return undefined;
  const candidates: Array<[string, unknown]> = [
    ['object', { unexpected: true }],
    ['boolean', true],
    ['integer', 7],
    ['string', 'not-the-right-type'],
    ['array', [1, 2]],
  ];
  return candidates.find(([type]) => !types.has(type) && !(type === 'string' && types.has('__const__')))?.[1];
}

export interface Breakage {
  what: string;
  body: Json;
}

/** Ways to break a valid body of this schema that the server must refuse with 400, each saying what it broke. */
export function breakagesOf(input: unknown, valid: Json): Breakage[] {
  const schema = flatten(input as Json);
  const properties = (schema.properties as Record<string, Json> | undefined) ?? {};
  const breakages: Breakage[] = [];
  for (const name of (schema.required as string[] | undefined) ?? []) {
    const { [name]: _removed, ...rest } = valid;
    breakages.push({ what: `without the required field ${name}`, body: rest });
  }
  for (const [name, property] of Object.entries(properties)) {
    const wrong = wrongTypeFor(property);
    if (wrong !== undefined) breakages.push({ what: `with ${name} of the wrong type (${JSON.stringify(wrong)})`, body: { ...valid, [name]: wrong } });
  }
  if (schema.additionalProperties === false) breakages.push({ what: 'with a field the schema does not have', body: { ...valid, notAFieldOfTheSpec: 1 } });
  return breakages;
}
