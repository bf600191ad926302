/**
 * The JSON Schemas a request of each operation is validated against, made
 * from the bundled spec (generated/openapi.json) once, at start.
 *
 * They are the schemas express-openapi-validator 5.6 builds for the same
 * operation (its parsers/schema.parse.js, body.parse.js and the Validator
 * of openapi.request.validator.js), so that the compiled validators
 * (request-validator.ts) answer exactly as it does; the difference test
 * (difference.test.ts) holds them to that. Two schemas per operation, as
 * there:
 *
 * - `general`: `{ query, headers, params }`, each an object schema of the
 *   operation's parameters of that `in` (header names lower-cased), the
 *   three required;
 * - `body`: `{ body }`, the schema of the request's media type, `body`
 *   required when that schema lists required properties (the validator's
 *   rule: it reads the schema's `required`, not the request body's).
 *
 * The spec's features these do not implement are refused here, at start,
 * naming the operation and the feature: a spec change that needs more of
 * the OpenAPI parameter model (styles, arrays, cookies, JSON-encoded
 * parameters) fails loudly instead of passing unchecked.
 */

/** The parts of the spec read here. */
export interface ApiDocument {
  openapi: string;
  paths: Record<string, Record<string, unknown>>;
  components?: { schemas?: Record<string, Schema>; parameters?: Record<string, Parameter>; requestBodies?: Record<string, RequestBody> };
}
export type Schema = Record<string, unknown>;
interface Parameter {
  $ref?: string;
  name: string;
  in: string;
  required?: boolean;
  schema?: Schema;
  [keyword: string]: unknown;
}
interface RequestBody {
  $ref?: string;
  required?: boolean;
  content: Record<string, { schema?: Schema }>;
}
interface OperationObject {
  operationId?: string;
  parameters?: Parameter[];
  requestBody?: RequestBody;
}

/** One request body media type of an operation, and the schema a body of it is validated against. */
export interface BodyContent {
  mediaType: string;
  schema: Schema;
}

export interface OperationSchemas {
  operationId: string;
  method: string;
  path: string;
  /** `{ query, headers, params }`, validated with type coercion (every parameter arrives as text). */
  general: Schema;
  /** The query parameters the operation takes; any other is refused. */
  queryNames: ReadonlySet<string>;
  /** The query parameters whose raw value may not hold RFC 3986 reserved characters, as sent (form style, exploded). */
  reservedCheckedQueryNames: readonly string[];
  /** The request body, when the operation has one. */
  requestBody?: { required: boolean; contents: BodyContent[] };
}

const METHODS = ['get', 'put', 'post', 'delete', 'patch', 'head', 'options', 'trace'];
/** The parameter locations and the request field each validates (the validator's PARAM_TYPE), cookies left out: none is declared. */
const FIELD_OF: Record<string, 'query' | 'headers' | 'params'> = { query: 'query', header: 'headers', path: 'params' };
/** The scalar types a parameter may have: each arrives as one string, which coercion turns into the type. */
const SCALAR_TYPES = new Set(['string', 'integer', 'number', 'boolean']);
/** Parameter keywords whose meaning these schemas do not implement (serialisation styles and their variants). */
const UNSUPPORTED_PARAMETER_KEYWORDS = ['style', 'explode', 'allowReserved', 'allowEmptyValue', 'content'];
/** The formats the validator checks (ajv-formats' fast mode, and its own numeric and binary ones); any other is refused. */
export const KNOWN_FORMATS = new Set(['uri', 'uri-reference', 'email', 'binary', 'byte', 'password', 'int32', 'int64', 'float', 'double', 'media-range']);

/** Refusal of a spec feature the compiled validators do not implement. */
export class UnsupportedSpecFeature extends Error {}

function unsupported(where: string, what: string): never {
  throw new UnsupportedSpecFeature(`${where}: ${what}, which the request validators (server/http/validation) do not implement. Implement it there, with cases in difference.test.ts, or describe the request another way.`);
}

/** A `#/components/<kind>/<name>` reference's target, or a refusal: the bundle refers only into its components. */
function resolve<T>(doc: ApiDocument, value: T & { $ref?: string }, where: string): T {
  if (typeof value.$ref !== 'string') return value;
  const match = /^#\/components\/(schemas|parameters|requestBodies)\/([^/]+)$/.exec(value.$ref);
  const target = match && (doc.components?.[match[1] as 'schemas'] as Record<string, unknown> | undefined)?.[match[2]];
  if (!target) unsupported(where, `the reference ${value.$ref}`);
  return target as T;
}

/** The spec's formats anywhere in its component schemas and request bodies must be ones the validator checks. */
function checkFormats(doc: ApiDocument): void {
  const visit = (value: unknown, where: string) => {
    if (Array.isArray(value)) {
      for (const [i, item] of value.entries()) visit(item, `${where}/${i}`);
      return;
    }
    if (!value || typeof value !== 'object') return;
    const format = (value as Schema).format;
    if (typeof format === 'string' && !KNOWN_FORMATS.has(format)) unsupported(where, `the format "${format}"`);
    for (const [key, child] of Object.entries(value)) if (key !== 'examples' && key !== 'example') visit(child, `${where}/${key}`);
  };
  visit(doc.components?.schemas, '#/components/schemas');
  for (const [path, item] of Object.entries(doc.paths)) visit(item, `#/paths/${path}`);
}

/**
 * express-openapi-validator's request preprocessing of the component schemas
 * (its schema.preprocessor.js, handleReadonly): a property whose own schema
 * says `readOnly: true` is no longer required of a request. A `readOnly`
 * reached through a `$ref` is left as it is, as there.
 */
function forRequests<T>(schemas: T): T {
  const copy = structuredClone(schemas);
  const seen = new Set<unknown>();
  const visit = (schema: unknown) => {
    if (!schema || typeof schema !== 'object' || seen.has(schema)) return;
    seen.add(schema);
    const node = schema as Schema;
    for (const keyword of ['allOf', 'oneOf', 'anyOf'] as const) if (Array.isArray(node[keyword])) (node[keyword] as unknown[]).forEach(visit);
    if (node.items) visit(node.items);
    const properties = node.properties as Record<string, Schema> | undefined;
    if (properties) {
      for (const [name, property] of Object.entries(properties)) {
        if (property?.readOnly === true && Array.isArray(node.required) && node.required.includes(name)) {
          node.required = (node.required as string[]).filter((required) => required !== name);
          if ((node.required as string[]).length === 0) delete node.required;
        }
        visit(property);
      }
    }
    if (node.additionalProperties && typeof node.additionalProperties === 'object') visit(node.additionalProperties);
  };
  Object.values(copy as Record<string, unknown>).forEach(visit);
  return copy;
}

/** Each operation's schemas, and the component schemas (prepared for requests) they refer to. */
export function requestSchemasOf(doc: ApiDocument): { components: Record<string, Schema>; operations: OperationSchemas[] } {
  if (!/^3\.1\./.test(doc.openapi)) unsupported('openapi', `OpenAPI ${doc.openapi} (JSON Schema 2020-12 dialect expected: 3.1)`);
  checkFormats(doc);
  const components = forRequests(doc.components?.schemas ?? {});
  // References resolve to the schemas prepared for requests, as the validator's do after its preprocessing.
  const prepared: ApiDocument = { ...doc, components: { ...doc.components, schemas: components } };
  const operations: OperationSchemas[] = [];
  for (const [path, item] of Object.entries(doc.paths)) {
    for (const key of Object.keys(item)) {
      if (key !== 'parameters' && key !== 'summary' && key !== 'description' && !METHODS.includes(key)) unsupported(`#/paths/${path}`, `the path item field "${key}"`);
    }
    for (const method of METHODS) {
      const operation = item[method] as OperationObject | undefined;
      if (!operation) continue;
      const where = `${method.toUpperCase()} ${path}`;
      if (!operation.operationId) unsupported(where, 'an operation without operationId');
      operations.push(schemasOf(prepared, path, method, operation, (item.parameters as Parameter[] | undefined) ?? [], where));
    }
  }
  return { components, operations };
}

function schemasOf(doc: ApiDocument, path: string, method: string, operation: OperationObject, pathLevel: Parameter[], where: string): OperationSchemas {
  // The validator's preprocessPathLevelParameters: the path item's parameters follow the operation's, unless the
  // operation declares one of the same name (or the same $ref).
  const declared = [...(operation.parameters ?? [])];
  for (const parameter of pathLevel) {
    if (!declared.some((own) => (own.name && own.name === parameter.name) || (own.$ref && own.$ref === parameter.$ref))) declared.push(parameter);
  }
  const fields: Record<'query' | 'headers' | 'params', Schema> = { query: {}, headers: {}, params: {} };
  const queryNames = new Set<string>();
  const reservedChecked: string[] = [];
  for (const reference of declared) {
    const parameter = resolve<Parameter>(doc, reference, where);
    const field = FIELD_OF[parameter.in];
    if (!field) unsupported(where, `the ${parameter.in} parameter "${parameter.name}"`);
    for (const keyword of UNSUPPORTED_PARAMETER_KEYWORDS) if (keyword in parameter) unsupported(where, `"${keyword}" on the parameter "${parameter.name}"`);
    if (parameter.name.includes('[')) unsupported(where, `the bracketed parameter name "${parameter.name}"`);
    if (!parameter.schema) unsupported(where, `the parameter "${parameter.name}" without a schema`);
    const schema = resolve<Schema>(doc, parameter.schema, where);
    if (typeof schema.type !== 'string' || !SCALAR_TYPES.has(schema.type)) unsupported(where, `the parameter "${parameter.name}" of type ${JSON.stringify(schema.type)} (only strings, numbers, integers and booleans)`);
    const name = parameter.in === 'header' ? parameter.name.toLowerCase() : parameter.name;
    const object = fields[field];
    if (!object.properties) Object.assign(object, { type: 'object', properties: {} });
    (object.properties as Record<string, Schema>)[name] = schema;
    if (parameter.required) object.required = [...((object.required as string[] | undefined) ?? []), name];
    if (parameter.in === 'query') {
      queryNames.add(name);
      // The validator's rule for a query parameter that is not allowReserved: form style, exploded (the defaults).
      reservedChecked.push(name);
    }
  }
  const general: Schema = { required: ['query', 'headers', 'params'], properties: { ...fields, cookies: {}, body: {} } };
  const schemas: OperationSchemas = { operationId: operation.operationId!, method: method.toUpperCase(), path, general, queryNames, reservedCheckedQueryNames: reservedChecked };
  if (operation.requestBody) {
    const requestBody = resolve<RequestBody>(doc, operation.requestBody, where);
    const contents = Object.entries(requestBody.content ?? {}).map(([mediaType, { schema }]) => {
      // An inline schema is prepared as the components were; a reference's target already is.
      const resolved = !schema ? {} : typeof schema.$ref === 'string' ? resolve<Schema>(doc, schema, where) : forRequests({ schema }).schema;
      if ((resolved.oneOf || resolved.anyOf) && resolved.discriminator) unsupported(where, `a request body with a discriminator (${mediaType})`);
      return { mediaType, schema: resolved };
    });
    schemas.requestBody = { required: requestBody.required === true, contents };
  }
  return schemas;
}
