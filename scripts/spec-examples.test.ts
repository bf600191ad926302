/**
 * Every example in the spec (generated/openapi.json, the bundle of openapi/)
 * validates against its schema: schema-level `example` and `examples`, the
 * `example` and named `examples` of request and response media types, of
 * parameters and of headers. Partners copy these examples, the mock answers
 * with them and the docs show them, so one that breaks its own schema teaches
 * a shape the server refuses (or never sends).
 *
 * The rules are the server's: JSON Schema 2020-12 (OpenAPI 3.1 §4.8.24), by
 * Ajv 2020 with ajv-formats, set up as the contract suite's response checker
 * is (contract-tests/support/spec-validator.ts: `strict: false` so OpenAPI's
 * own keywords such as `example` and `discriminator` are let through).
 */
import { readFileSync } from 'node:fs';
import { Ajv2020 } from 'ajv/dist/2020.js';
import formats from 'ajv-formats';
import { describe, expect, it } from 'vitest';
import { specPath } from '../server/app.ts';

type Json = null | boolean | number | string | Json[] | { [key: string]: Json };
type JsonObject = { [key: string]: Json };
const isObject = (value: Json | undefined): value is JsonObject => typeof value === 'object' && value !== null && !Array.isArray(value);

/** A JSON Pointer segment (RFC 6901): `~` as `~0`, `/` as `~1`. */
const segment = (key: string | number) => String(key).replace(/~/g, '~0').replace(/\//g, '~1');

/** One example found in the spec: where it is, where its schema is, and its value. */
interface FoundExample {
  /** JSON Pointer (as a URI fragment) to the example's value. */
  pointer: string;
  /** JSON Pointer to the schema it must match. */
  schemaPointer: string;
  value: Json;
}

/** The node at a `#/…` pointer of the document, or undefined. */
function at(document: JsonObject, pointer: string): Json | undefined {
  let node: Json | undefined = document;
  for (const part of pointer.slice(2).split('/')) {
    if (part === '' && pointer === '#') break;
    const key = part.replace(/~1/g, '/').replace(/~0/g, '~');
    node = Array.isArray(node) ? node[Number(key)] : isObject(node) ? node[key] : undefined;
  }
  return node;
}

/** Keywords of a JSON Schema (2020-12) whose value is one schema, a list of schemas, or a map of them. */
const singleSchemaKeywords = ['items', 'additionalProperties', 'not', 'if', 'then', 'else', 'contains', 'propertyNames', 'unevaluatedItems', 'unevaluatedProperties', 'contentSchema'];
const schemaListKeywords = ['allOf', 'anyOf', 'oneOf', 'prefixItems'];
const schemaMapKeywords = ['properties', 'patternProperties', '$defs', 'definitions', 'dependentSchemas'];

/**
 * Every example in an OpenAPI 3.1 document, with the schema it must match.
 * Walks the document's structure (paths, webhooks, components) rather than
 * every key named `example`, so that a property called `example` is not
 * taken for one. `$ref`s are not followed: what they point at is walked
 * where it is defined, so each example is found once.
 */
function findExamples(document: JsonObject): FoundExample[] {
  const found: FoundExample[] = [];

  const schema = (node: Json | undefined, pointer: string) => {
    if (!isObject(node)) return;
    if ('example' in node) found.push({ pointer: `${pointer}/example`, schemaPointer: pointer, value: node.example });
    // In a schema, `examples` is JSON Schema's array of examples (2020-12 §9.5).
    if (Array.isArray(node.examples)) for (const [i, value] of node.examples.entries()) found.push({ pointer: `${pointer}/examples/${i}`, schemaPointer: pointer, value });
    for (const keyword of singleSchemaKeywords) schema(node[keyword], `${pointer}/${keyword}`);
    for (const keyword of schemaListKeywords) {
      const list = node[keyword];
      if (Array.isArray(list)) for (const [i, child] of list.entries()) schema(child, `${pointer}/${keyword}/${i}`);
    }
    for (const keyword of schemaMapKeywords) {
      const map = node[keyword];
      if (isObject(map)) for (const [name, child] of Object.entries(map)) schema(child, `${pointer}/${keyword}/${segment(name)}`);
    }
  };

  /**
   * What media types, parameters and headers have alike: a `schema`, an
   * `example`, named `examples` (each an Example Object, or a `$ref` to one).
   */
  const withExamples = (node: JsonObject, pointer: string, schemaPointer: string) => {
    if ('example' in node) found.push({ pointer: `${pointer}/example`, schemaPointer, value: node.example });
    if (isObject(node.examples)) {
      for (const [name, example] of Object.entries(node.examples)) {
        let examplePointer = `${pointer}/examples/${segment(name)}`;
        let exampleObject: Json | undefined = example;
        if (isObject(example) && typeof example.$ref === 'string' && example.$ref.startsWith('#/')) {
          examplePointer = example.$ref;
          exampleObject = at(document, example.$ref);
        }
        // An example given by `externalValue` has no value here to check.
        if (isObject(exampleObject) && 'value' in exampleObject) found.push({ pointer: `${examplePointer}/value`, schemaPointer, value: exampleObject.value });
      }
    }
  };

  const mediaTypes = (content: Json | undefined, pointer: string) => {
    if (!isObject(content)) return;
    for (const [mediaType, media] of Object.entries(content)) {
      if (!isObject(media)) continue;
      const mediaPointer = `${pointer}/${segment(mediaType)}`;
      schema(media.schema, `${mediaPointer}/schema`);
      if (media.schema !== undefined) withExamples(media, mediaPointer, `${mediaPointer}/schema`);
    }
  };

  /** A parameter or a header: either a `schema` (with the examples beside it) or `content`. */
  const parameter = (node: Json | undefined, pointer: string) => {
    if (!isObject(node) || '$ref' in node) return;
    schema(node.schema, `${pointer}/schema`);
    if (node.schema !== undefined) withExamples(node, pointer, `${pointer}/schema`);
    mediaTypes(node.content, `${pointer}/content`);
  };

  const response = (node: Json | undefined, pointer: string) => {
    if (!isObject(node) || '$ref' in node) return;
    if (isObject(node.headers)) for (const [name, header] of Object.entries(node.headers)) parameter(header, `${pointer}/headers/${segment(name)}`);
    mediaTypes(node.content, `${pointer}/content`);
  };

  const requestBody = (node: Json | undefined, pointer: string) => {
    if (isObject(node) && !('$ref' in node)) mediaTypes(node.content, `${pointer}/content`);
  };

  const parameters = (list: Json | undefined, pointer: string) => {
    if (Array.isArray(list)) for (const [i, node] of list.entries()) parameter(node, `${pointer}/${i}`);
  };

  const methods = ['get', 'put', 'post', 'delete', 'options', 'head', 'patch', 'trace'];
  const pathItem = (item: Json | undefined, pointer: string) => {
    if (!isObject(item) || '$ref' in item) return;
    parameters(item.parameters, `${pointer}/parameters`);
    for (const method of methods) {
      const operation = item[method];
      if (!isObject(operation)) continue;
      const operationPointer = `${pointer}/${method}`;
      parameters(operation.parameters, `${operationPointer}/parameters`);
      requestBody(operation.requestBody, `${operationPointer}/requestBody`);
      if (isObject(operation.responses)) for (const [status, node] of Object.entries(operation.responses)) response(node, `${operationPointer}/responses/${segment(status)}`);
      if (isObject(operation.callbacks)) {
        for (const [name, callback] of Object.entries(operation.callbacks)) {
          if (isObject(callback)) for (const [expression, inner] of Object.entries(callback)) pathItem(inner, `${operationPointer}/callbacks/${segment(name)}/${segment(expression)}`);
        }
      }
    }
  };

  for (const section of ['paths', 'webhooks'] as const) {
    const items = document[section];
    if (isObject(items)) for (const [name, item] of Object.entries(items)) pathItem(item, `#/${section}/${segment(name)}`);
  }
  const components = isObject(document.components) ? document.components : {};
  const each = (kind: string, visit: (node: Json, pointer: string) => void) => {
    const map = components[kind];
    if (isObject(map)) for (const [name, node] of Object.entries(map)) visit(node, `#/components/${kind}/${segment(name)}`);
  };
  each('schemas', schema);
  each('responses', response);
  each('parameters', parameter);
  each('headers', parameter);
  each('requestBodies', requestBody);
  each('pathItems', pathItem);
  return found;
}

/** An example that breaks its schema: where it is, and each way it breaks it. */
interface InvalidExample {
  pointer: string;
  errors: string[];
}

/** Validates every example of `document` against its schema; returns the ones that fail. */
function invalidExamples(document: JsonObject): { checked: number; invalid: InvalidExample[] } {
  const ajv = new Ajv2020({ strict: false, allErrors: true });
  // ajv-formats is CommonJS; under NodeNext its function is the default export's `default`.
  formats.default(ajv);
  // The document is registered as a schema so that `#/components/…` refs resolve inside it.
  ajv.addSchema(document, 'spec');
  const examples = findExamples(document);
  const invalid: InvalidExample[] = [];
  for (const example of examples) {
    let validate: ReturnType<typeof ajv.compile>;
    try {
      validate = ajv.compile({ $ref: `spec${example.schemaPointer}` });
    } catch (error) {
      invalid.push({ pointer: example.pointer, errors: [`its schema at ${example.schemaPointer} does not compile: ${(error as Error).message}`] });
      continue;
    }
    if (!validate(example.value)) {
      invalid.push({ pointer: example.pointer, errors: (validate.errors ?? []).map((error) => `${error.instancePath || '(the value)'} ${error.message}${error.params && 'allowedValues' in error.params ? ` (${JSON.stringify(error.params.allowedValues)})` : ''}`) });
    }
  }
  return { checked: examples.length, invalid };
}

describe('the examples of the spec', () => {
  it('each validate against their schema, by the rules of JSON Schema 2020-12', () => {
    const spec = JSON.parse(readFileSync(specPath, 'utf8')) as JsonObject;
    const { checked, invalid } = invalidExamples(spec);
    // The walk reaches every kind of place: a count far below today's would mean it lost some.
    expect(checked).toBeGreaterThan(150);
    expect(invalid).toEqual([]);
  });

  it('are found in every place an example can be, and each broken one is reported with its JSON pointer', () => {
    const id = { type: 'string', pattern: '^prj_' };
    const broken: JsonObject = {
      openapi: '3.1.0',
      info: { title: 'broken examples', version: '1.0.0' },
      paths: {
        '/projects/{projectid}': {
          parameters: [{ name: 'projectid', in: 'path', required: true, schema: id, example: 'ply_wrongkind' }],
          post: {
            parameters: [
              { name: 'limit', in: 'query', schema: { type: 'integer', maximum: 100 }, examples: { tooMany: { value: 500 }, fine: { value: 10 } } },
              { name: 'filter', in: 'query', content: { 'application/json': { schema: { type: 'object', required: ['name'] }, example: {} } } },
            ],
            requestBody: {
              content: {
                'application/json': {
                  schema: { $ref: '#/components/schemas/Project' },
                  examples: { misspelt: { value: { nmae: 'Album' } }, byRef: { $ref: '#/components/examples/badColor' } },
                },
              },
            },
            responses: {
              '200': {
                description: 'ok',
                headers: { ETag: { schema: { type: 'string', pattern: '^"[0-9]+"$' }, example: 'W/"7"' } },
                content: { 'application/json': { schema: { $ref: '#/components/schemas/Project' }, example: { name: 7 } } },
              },
              default: { $ref: '#/components/responses/Problem' },
            },
          },
        },
      },
      webhooks: {
        projectCreated: { post: { requestBody: { content: { 'application/json': { schema: { type: 'object', properties: { id }, required: ['id'] }, example: { id: 'box_1' } } } } } },
      },
      components: {
        schemas: {
          Project: {
            type: 'object',
            additionalProperties: false,
            required: ['name'],
            properties: {
              name: { type: 'string', minLength: 1, example: '' },
              color: { type: 'string', format: 'uri', examples: ['https://example.com/a', 'not a uri'] },
              // A property named `example` is a field, not an example to check.
              example: { type: 'string' },
              tags: { type: 'array', items: { type: 'string', enum: ['demo', 'final'], example: 'draft' } },
            },
            example: { name: 'Album', example: 'fine' },
          },
        },
        examples: { badColor: { value: { name: 'Album', color: 'not a uri' } } },
        responses: {
          Problem: { description: 'problem', content: { 'application/problem+json': { schema: { type: 'object', properties: { status: { type: 'integer' } } }, example: { status: '500' } } } },
        },
        parameters: { Limit: { name: 'limit', in: 'query', schema: { type: 'integer', minimum: 1 }, example: 0 } },
        headers: { RetryAfter: { schema: { type: 'integer' }, example: 'soon' } },
      },
    };
    const { checked, invalid } = invalidExamples(broken);
    const path = '#/paths/~1projects~1{projectid}';
    expect(invalid.map((example) => example.pointer).sort()).toEqual(
      [
        `${path}/parameters/0/example`,
        `${path}/post/parameters/0/examples/tooMany/value`,
        `${path}/post/parameters/1/content/application~1json/example`,
        `${path}/post/requestBody/content/application~1json/examples/misspelt/value`,
        '#/components/examples/badColor/value',
        `${path}/post/responses/200/headers/ETag/example`,
        `${path}/post/responses/200/content/application~1json/example`,
        '#/webhooks/projectCreated/post/requestBody/content/application~1json/example',
        '#/components/schemas/Project/properties/name/example',
        '#/components/schemas/Project/properties/color/examples/1',
        '#/components/schemas/Project/properties/tags/items/example',
        '#/components/responses/Problem/content/application~1problem+json/example',
        '#/components/parameters/Limit/example',
        '#/components/headers/RetryAfter/example',
      ].sort(),
    );
    // The valid ones were checked too: the `fine` query example, the first color, the schema's own example.
    expect(checked).toBe(invalid.length + 3);
    // Each failure says how the value breaks the schema.
    const misspelt = invalid.find((example) => example.pointer.endsWith('/misspelt/value'));
    expect(misspelt?.errors).toEqual(expect.arrayContaining(['(the value) must have required property \'name\'', '(the value) must NOT have additional properties']));
    expect(invalid.find((example) => example.pointer.endsWith('/tags/items/example'))?.errors).toEqual(['(the value) must be equal to one of the allowed values (["demo","final"])']);
  });
});
