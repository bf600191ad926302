import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { specPath } from '../../app.ts';
import { OPERATIONS } from '../../../generated/operations.ts';
import { requestSchemasOf, UnsupportedSpecFeature, type ApiDocument } from './request-schemas.ts';

/** A spec of one operation whose parameter or body is `change`d. */
function specWith(parameter: Record<string, unknown> | undefined, body?: Record<string, unknown>): ApiDocument {
  return {
    openapi: '3.1.0',
    paths: {
      '/things': {
        get: {
          operationId: 'listThings',
          parameters: parameter ? [parameter] : [],
          ...(body ? { requestBody: { content: { 'application/json': { schema: body } } } } : {}),
        },
      },
    },
    components: { schemas: {} },
  };
}

describe('the request schemas made from the spec', () => {
  it('cover every operation of the bundled spec, with the parameters each takes', () => {
    const { operations } = requestSchemasOf(JSON.parse(readFileSync(specPath, 'utf8')));
    expect(operations.map(({ operationId }) => operationId).sort()).toEqual([...new Set(OPERATIONS.map(({ id }) => id))].sort());
    const listPlayers = operations.find(({ operationId }) => operationId === 'listPlayers')!;
    expect([...listPlayers.queryNames]).toEqual(expect.arrayContaining(['limit', 'cursor']));
  });

  it('refuse at start, naming the operation and the feature, what the validators do not implement', () => {
    const refusals: Array<[string, ApiDocument, RegExp]> = [
      ['a cookie parameter', specWith({ name: 'c', in: 'cookie', schema: { type: 'string' } }), /GET \/things: the cookie parameter "c"/],
      ['a serialisation style', specWith({ name: 'f', in: 'query', style: 'deepObject', schema: { type: 'string' } }), /"style" on the parameter "f"/],
      ['allowEmptyValue', specWith({ name: 'f', in: 'query', allowEmptyValue: true, schema: { type: 'string' } }), /"allowEmptyValue"/],
      ['an array parameter', specWith({ name: 'ids', in: 'query', schema: { type: 'array', items: { type: 'string' } } }), /of type "array"/],
      ['a JSON-encoded parameter', specWith({ name: 'q', in: 'query', content: { 'application/json': { schema: {} } } }), /"content" on the parameter "q"/],
      ['a bracketed name', specWith({ name: 'filter[name]', in: 'query', schema: { type: 'string' } }), /bracketed parameter name/],
      ['an unknown format', specWith(undefined, { type: 'object', properties: { at: { type: 'string', format: 'date-time' } } }), /the format "date-time"/],
      ['a discriminated body', specWith(undefined, { oneOf: [{ type: 'object' }], discriminator: { propertyName: 'kind' } }), /discriminator/],
      ['OpenAPI 3.0', { ...specWith(undefined), openapi: '3.0.3' }, /OpenAPI 3\.0\.3/],
    ];
    for (const [what, spec, message] of refusals) {
      expect(() => requestSchemasOf(spec), what).toThrow(UnsupportedSpecFeature);
      expect(() => requestSchemasOf(spec), what).toThrow(message);
    }
  });

  it('no longer require of a request a property whose own schema is read-only', () => {
    const spec = specWith(undefined, { type: 'object', required: ['id', 'name'], properties: { id: { type: 'string', readOnly: true }, name: { type: 'string' } } });
    const [operation] = requestSchemasOf(spec).operations;
    expect(operation.requestBody?.contents[0].schema.required).toEqual(['name']);
  });
});
