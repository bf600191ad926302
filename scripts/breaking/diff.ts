/**
 * The breaking changes between two bundled OpenAPI 3.1 documents: the last
 * released spec (`base`) and the one about to be released (`revision`).
 * `npm run check:breaking` (check-breaking.ts) fails on any of them unless
 * `info.version`'s major went up (Semantic Versioning 2.0.0 §8: "Major
 * version X MUST be incremented if any backwards incompatible changes are
 * introduced to the public API").
 *
 * A change is breaking when a client written against `base` can fail
 * against `revision`. Requests and responses are judged the other way
 * round, because a client sends one and reads the other:
 *
 * - **Requests** (parameters and bodies, which the server validates): a value
 *   the base accepted must still be accepted. Breaking: a field or
 *   parameter removed, a field, parameter or body newly required, an enum
 *   value removed, a type removed from a union, a new or lower `maxLength` /
 *   `maximum` (and their kin; on an integer, not one at or past 2^53 − 1,
 *   beyond which integers are not interoperable), a new or higher
 *   `minLength` / `minimum`, a new
 *   or changed `pattern`, `format` or `multipleOf`, other fields newly
 *   refused (`additionalProperties: false`), a media type removed.
 * - **Responses** (and webhook payloads, which clients receive): what a
 *   client reads must still be there, and of a type it expects. Breaking: a
 *   field removed or no longer always sent, an enum value removed, a type
 *   added (a field that may now be `null`), a header or media type removed.
 * - **Operations and statuses:** an operation or webhook removed, a status
 *   removed (`default` included), a new success (2xx) status beside the
 *   ones clients handle.
 * - **Security** (an operation's own, else the document's): a client holds
 *   one of the credentials the base accepted, or none where the base took
 *   none. Breaking: an operation open to anyone (`security: []`, or `{}`
 *   among its requirements) that now needs a credential; a requirement
 *   with no counterpart left (one needing no scheme it lacks); a scope added
 *   to, or changed in, a requirement that already named scopes, which the
 *   tokens made for the old list lack. Harmless: a new alternative (another
 *   way in, such as a session cookie or an OAuth token), and scopes named
 *   where a requirement named none: on this API, tokens made before scopes
 *   carry every scope, so they keep working.
 *
 * Harmless, and not reported: a new operation, a new optional request field
 * or parameter, a widened request type, a new response field, a new error
 * status (every operation documents a `default` problem), text and examples.
 */

export type Json = null | boolean | number | string | Json[] | { [key: string]: Json };
export type JsonObject = { [key: string]: Json };

/** One breaking change: where it is (a JSON Pointer into the base document, as a URI fragment) and what it is. */
export interface BreakingChange {
  path: string;
  message: string;
}

const isObject = (value: Json | undefined): value is JsonObject => typeof value === 'object' && value !== null && !Array.isArray(value);

/** A JSON Pointer segment (RFC 6901): `~` as `~0`, `/` as `~1`. */
const segment = (key: string | number) => String(key).replace(/~/g, '~0').replace(/\//g, '~1');

const methods = ['get', 'put', 'post', 'delete', 'options', 'head', 'patch', 'trace'];

type Direction = 'request' | 'response';

/** A node of one of the two documents, with the pointer it was found at (after any `$ref` was followed). */
interface Located {
  node: JsonObject;
  pointer: string;
}

/** The major version of `info.version` (Semantic Versioning), or undefined when it is not of that form. */
export function majorVersion(version: Json | undefined): number | undefined {
  const match = typeof version === 'string' ? /^v?(\d+)\./.exec(version) : null;
  return match ? Number(match[1]) : undefined;
}

/** Every breaking change from `base` to `revision`, each once, in the order of the base document. */
export function breakingChanges(base: JsonObject, revision: JsonObject): BreakingChange[] {
  const changes = new Map<string, BreakingChange>();
  const report = (path: string, message: string) => {
    const key = `${path}\n${message}`;
    if (!changes.has(key)) changes.set(key, { path, message });
  };
  /** Pairs of schemas already compared in a direction: shared components are compared once, and cycles end. */
  const compared = new Set<string>();

  /** Follows `$ref`s (local ones, as in a bundle) to the node they name. */
  const resolve = (document: JsonObject, node: Json | undefined, pointer: string): Located | undefined => {
    const seen = new Set<string>();
    while (isObject(node) && typeof node.$ref === 'string' && node.$ref.startsWith('#')) {
      if (seen.has(node.$ref)) return undefined;
      seen.add(node.$ref);
      pointer = node.$ref;
      node = node.$ref
        .slice(2)
        .split('/')
        .filter((part) => part !== '')
        .reduce<Json | undefined>((at, part) => {
          const key = part.replace(/~1/g, '/').replace(/~0/g, '~');
          return Array.isArray(at) ? at[Number(key)] : isObject(at) ? at[key] : undefined;
        }, document);
    }
    return isObject(node) ? { node, pointer } : undefined;
  };

  // ── Schemas ────────────────────────────────────────────────────────────────

  /**
   * A schema with its `allOf` members folded in: their properties, required
   * fields and constraints, as one object. Each property keeps the pointer
   * of the member that declares it.
   */
  interface Flat {
    pointer: string;
    schema: JsonObject;
    properties: Map<string, Located>;
    required: Set<string>;
  }
  const flatten = (document: JsonObject, located: Located, depth = 0): Flat => {
    const schema: JsonObject = { ...located.node };
    delete schema.allOf;
    const properties = new Map<string, Located>();
    const required = new Set<string>(Array.isArray(located.node.required) ? (located.node.required as string[]) : []);
    if (isObject(located.node.properties)) {
      for (const [name, property] of Object.entries(located.node.properties)) {
        if (isObject(property)) properties.set(name, { node: property, pointer: `${located.pointer}/properties/${segment(name)}` });
      }
    }
    const members = Array.isArray(located.node.allOf) ? located.node.allOf : [];
    for (const [i, member] of members.entries()) {
      const resolved = depth < 32 ? resolve(document, member, `${located.pointer}/allOf/${i}`) : undefined;
      if (!resolved) continue;
      const inner = flatten(document, resolved, depth + 1);
      for (const [name, property] of inner.properties) if (!properties.has(name)) properties.set(name, property);
      for (const name of inner.required) required.add(name);
      for (const [keyword, value] of Object.entries(inner.schema)) {
        if (keyword === 'properties' || keyword === 'required') continue;
        if (keyword === 'type' && schema.type !== undefined) {
          // Both say: the value must be of a type both allow.
          const mine = typeList(schema.type);
          schema.type = typeList(value).filter((type) => mine.includes(type));
        } else if (keyword === 'additionalProperties' && value === false) {
          schema.additionalProperties = false;
        } else if (!(keyword in schema)) {
          schema[keyword] = value;
        }
      }
    }
    return { pointer: located.pointer, schema, properties, required };
  };

  const typeList = (type: Json | undefined): string[] => (Array.isArray(type) ? (type as string[]) : typeof type === 'string' ? [type] : []);
  const typeOfValue = (value: Json): string => (value === null ? 'null' : Array.isArray(value) ? 'array' : Number.isInteger(value) ? 'integer' : typeof value);

  /** The JSON types a (flattened, non-union) schema allows; undefined for any. */
  const typesOf = (schema: JsonObject): Set<string> | undefined => {
    if ('const' in schema) return new Set([typeOfValue(schema.const)]);
    if (Array.isArray(schema.enum)) return new Set(schema.enum.map(typeOfValue));
    const types = typeList(schema.type);
    return types.length > 0 ? new Set(types) : undefined;
  };

  /** `a` allows every value of type `b` ("number" takes integers). */
  const covers = (types: Set<string>, type: string) => types.has(type) || (type === 'integer' && types.has('number'));

  /** The branches of a `oneOf` / `anyOf`, or the schema itself as its one branch. */
  const branchesOf = (document: JsonObject, located: Located): Located[] => {
    const keyword = Array.isArray(located.node.oneOf) ? 'oneOf' : Array.isArray(located.node.anyOf) ? 'anyOf' : undefined;
    if (!keyword) return [located];
    return (located.node[keyword] as Json[]).flatMap((branch, i) => {
      const pointer = `${located.pointer}/${keyword}/${i}`;
      const resolved = resolve(document, branch, pointer);
      // A branch keeps the name of the component it refers to, to be matched by it.
      return resolved ? [{ ...resolved, ref: isObject(branch) && typeof branch.$ref === 'string' ? branch.$ref : undefined }] : [];
    });
  };
  const branchTypes = (document: JsonObject, branch: Located): string => {
    const types = typesOf(flatten(document, branch).schema);
    return types ? [...types].sort().join('|') : 'any';
  };

  const describeTypes = (types: Iterable<string>) => [...types].join(', ');

  const compareSchemas = (baseAt: Json | undefined, basePointer: string, revisionAt: Json | undefined, revisionPointer: string, direction: Direction) => {
    const baseSchema = resolve(base, baseAt, basePointer);
    const revisionSchema = resolve(revision, revisionAt, revisionPointer);
    if (!baseSchema || !revisionSchema) return;
    const key = `${direction} ${baseSchema.pointer} ${revisionSchema.pointer}`;
    if (compared.has(key)) return;
    compared.add(key);

    const baseBranches = branchesOf(base, baseSchema) as Array<Located & { ref?: string }>;
    const revisionBranches = branchesOf(revision, revisionSchema) as Array<Located & { ref?: string }>;
    if (baseBranches.length === 1 && revisionBranches.length === 1) {
      compareFlat(flatten(base, baseBranches[0]), flatten(revision, revisionBranches[0]), direction);
      return;
    }
    // Unions: pair the branches by the component they refer to, else by their types.
    const unpaired = new Set(revisionBranches);
    const pairs: Array<[Located, Located]> = [];
    const lonely: Located[] = [];
    for (const branch of baseBranches) {
      const byRef = branch.ref ? [...unpaired].find((candidate) => candidate.ref === branch.ref) : undefined;
      const match = byRef ?? [...unpaired].find((candidate) => branchTypes(revision, candidate) === branchTypes(base, branch));
      if (match) {
        unpaired.delete(match);
        pairs.push([branch, match]);
      } else lonely.push(branch);
    }
    for (const branch of lonely) {
      // A base branch with nothing like it left: in a request, values it took may now be refused.
      if (direction === 'request') report(branch.pointer, `no longer accepted: this branch of the union (${branchTypes(base, branch)}) was removed`);
    }
    if (direction === 'response') {
      const known = new Set(baseBranches.flatMap((branch) => branchTypes(base, branch).split('|')));
      for (const branch of unpaired) {
        const added = branchTypes(revision, branch)
          .split('|')
          .filter((type) => type !== 'any' && !known.has(type) && !(type === 'integer' && known.has('number')));
        if (added.length > 0) report(baseSchema.pointer, `may now be of type ${describeTypes(added)}, which clients do not expect`);
      }
    }
    for (const [baseBranch, revisionBranch] of pairs) compareFlat(flatten(base, baseBranch), flatten(revision, revisionBranch), direction);
  };

  /** Lower is narrower for these (a value over the new bound is refused)... */
  const upperBounds = ['maxLength', 'maximum', 'exclusiveMaximum', 'maxItems', 'maxProperties'];
  /** ...and higher is narrower for these. */
  const lowerBounds = ['minLength', 'minimum', 'exclusiveMinimum', 'minItems', 'minProperties'];
  /** Any new or changed value narrows these. */
  const exactRules = ['pattern', 'format', 'multipleOf'];
  /**
   * RFC 8259 section 6: "numbers that are integers and are in the range
   * [-(2**53)+1, (2**53)-1] are interoperable in the sense that
   * implementations will agree exactly on their numeric values." An integer
   * beyond them is not one value clients and servers agree on, so a bound on
   * an integer at or past them (`maximum: 9007199254740991`) refuses nothing
   * a client could rely on sending: not a narrowing.
   */
  const INTEROPERABLE_INTEGER = 2 ** 53 - 1;
  const onlyRefusesUninteroperable = (schema: JsonObject, keyword: string, bound: number) => {
    const types = typesOf(schema);
    if (types?.size !== 1 || !types.has('integer')) return false;
    if (keyword === 'maximum') return bound >= INTEROPERABLE_INTEGER;
    if (keyword === 'exclusiveMaximum') return bound > INTEROPERABLE_INTEGER;
    if (keyword === 'minimum') return bound <= -INTEROPERABLE_INTEGER;
    if (keyword === 'exclusiveMinimum') return bound < -INTEROPERABLE_INTEGER;
    return false;
  };

  const compareFlat = (before: Flat, after: Flat, direction: Direction) => {
    const at = before.pointer;
    const beforeTypes = typesOf(before.schema);
    const afterTypes = typesOf(after.schema);
    if (direction === 'request') {
      if (afterTypes && !beforeTypes) report(at, `narrowed: was of any type, now only ${describeTypes(afterTypes)}`);
      if (afterTypes && beforeTypes) {
        const removed = [...beforeTypes].filter((type) => !covers(afterTypes, type));
        if (removed.length > 0) report(at, `narrowed: no longer accepts ${describeTypes(removed)}`);
      }
      for (const keyword of upperBounds) {
        const was = before.schema[keyword];
        const now = after.schema[keyword];
        if (typeof now === 'number' && (typeof was !== 'number' || now < was) && !onlyRefusesUninteroperable(after.schema, keyword, now)) {
          report(at, `narrowed: ${keyword} ${typeof was === 'number' ? `lowered from ${was} to ${now}` : `${now} added`}`);
        }
      }
      for (const keyword of lowerBounds) {
        const was = before.schema[keyword];
        const now = after.schema[keyword];
        if (typeof now === 'number' && (typeof was !== 'number' || now > was) && !onlyRefusesUninteroperable(after.schema, keyword, now)) {
          report(at, `narrowed: ${keyword} ${typeof was === 'number' ? `raised from ${was} to ${now}` : `${now} added`}`);
        }
      }
      for (const keyword of exactRules) {
        const was = before.schema[keyword];
        const now = after.schema[keyword];
        if (now !== undefined && now !== was) report(at, `narrowed: ${keyword} ${was === undefined ? `${JSON.stringify(now)} added` : `changed from ${JSON.stringify(was)} to ${JSON.stringify(now)}`}`);
      }
      if (after.schema.uniqueItems === true && before.schema.uniqueItems !== true) report(at, 'narrowed: uniqueItems added');
      if (after.schema.additionalProperties === false && before.schema.additionalProperties !== false && (beforeTypes === undefined || beforeTypes.has('object'))) {
        report(at, 'narrowed: fields other than the ones named are now refused (additionalProperties: false)');
      }
      for (const name of after.required) {
        if (!before.required.has(name)) report(after.properties.has(name) && before.properties.has(name) ? before.properties.get(name)!.pointer : at, `request field ${name} is newly required`);
      }
    } else if (beforeTypes && afterTypes) {
      const added = [...afterTypes].filter((type) => !covers(beforeTypes, type));
      if (added.length > 0) report(at, `may now be of type ${describeTypes(added)}, which clients do not expect`);
    } else if (beforeTypes && !afterTypes) {
      report(at, `may now be of any type, not only ${describeTypes(beforeTypes)}`);
    }

    // Enum values (and a const, an enum of one) that a client could send or may rely on.
    const valuesOf = (schema: JsonObject): Json[] | undefined => ('const' in schema ? [schema.const] : Array.isArray(schema.enum) ? schema.enum : undefined);
    const beforeValues = valuesOf(before.schema);
    const afterValues = valuesOf(after.schema);
    if (afterValues) {
      const kept = new Set(afterValues.map((value) => JSON.stringify(value)));
      if (beforeValues) {
        const removed = beforeValues.filter((value) => !kept.has(JSON.stringify(value)));
        if (removed.length > 0) report(at, `${direction} enum value${removed.length > 1 ? 's' : ''} ${removed.map((value) => JSON.stringify(value)).join(', ')} removed`);
      } else if (direction === 'request') {
        report(at, `narrowed: only ${afterValues.map((value) => JSON.stringify(value)).join(', ')} accepted now`);
      }
    }

    for (const [name, property] of before.properties) {
      const counterpart = after.properties.get(name);
      if (!counterpart) {
        report(property.pointer, `${direction} field ${name} removed`);
        continue;
      }
      if (direction === 'response' && before.required.has(name) && !after.required.has(name)) report(property.pointer, `response field ${name} is no longer always sent`);
      compareSchemas(property.node, property.pointer, counterpart.node, counterpart.pointer, direction);
    }
    for (const keyword of ['items', 'additionalProperties', 'contains', 'propertyNames']) {
      if (isObject(before.schema[keyword]) && isObject(after.schema[keyword])) {
        compareSchemas(before.schema[keyword], `${at}/${keyword}`, after.schema[keyword], `${after.pointer}/${keyword}`, direction);
      }
    }
  };

  // ── Operations ────────────────────────────────────────────────────────────

  /** The parameters of an operation, the path item's included, by `in` and name (header names are case-insensitive). */
  const parametersOf = (document: JsonObject, item: Located, operation: Located): Map<string, Located> => {
    const parameters = new Map<string, Located>();
    for (const [owner, list] of [
      [item, item.node.parameters],
      [operation, operation.node.parameters],
    ] as Array<[Located, Json | undefined]>) {
      if (!Array.isArray(list)) continue;
      for (const [i, parameter] of list.entries()) {
        const resolved = resolve(document, parameter, `${owner.pointer}/parameters/${i}`);
        if (!resolved) continue;
        const where = String(resolved.node.in);
        const name = where === 'header' ? String(resolved.node.name).toLowerCase() : String(resolved.node.name);
        parameters.set(`${where} ${name}`, resolved);
      }
    }
    return parameters;
  };

  const compareParameters = (baseItem: Located, baseOperation: Located, revisionItem: Located, revisionOperation: Located) => {
    const before = parametersOf(base, baseItem, baseOperation);
    const after = parametersOf(revision, revisionItem, revisionOperation);
    for (const [key, parameter] of before) {
      const counterpart = after.get(key);
      const [where, name] = key.split(' ');
      if (!counterpart) {
        report(parameter.pointer, `${where} parameter ${name} removed`);
        continue;
      }
      if (counterpart.node.required === true && parameter.node.required !== true) report(parameter.pointer, `${where} parameter ${name} is now required`);
      compareSchemas(parameter.node.schema, `${parameter.pointer}/schema`, counterpart.node.schema, `${counterpart.pointer}/schema`, 'request');
      compareContent(parameter.node.content, `${parameter.pointer}/content`, counterpart.node.content, `${counterpart.pointer}/content`, 'request');
    }
    for (const [key, parameter] of after) {
      const [where, name] = key.split(' ');
      if (!before.has(key) && parameter.node.required === true) report(baseOperation.pointer, `new required ${where} parameter ${name}`);
    }
  };

  /** The schemas of each media type, compared where both documents list it; a media type removed is reported. */
  const compareContent = (before: Json | undefined, beforePointer: string, after: Json | undefined, afterPointer: string, direction: Direction) => {
    if (!isObject(before)) return;
    const afterContent = isObject(after) ? after : {};
    for (const [mediaType, media] of Object.entries(before)) {
      const pointer = `${beforePointer}/${segment(mediaType)}`;
      const counterpart = afterContent[mediaType];
      if (!isObject(counterpart)) {
        report(pointer, direction === 'request' ? `request media type ${mediaType} no longer accepted` : `response media type ${mediaType} no longer sent`);
        continue;
      }
      if (isObject(media)) compareSchemas(media.schema, `${pointer}/schema`, counterpart.schema, `${afterPointer}/${segment(mediaType)}/schema`, direction);
    }
  };

  /** A request body (of an operation, or the payload of a webhook, read in `direction`). */
  const compareRequestBody = (beforeAt: Json | undefined, operationPointer: string, afterAt: Json | undefined, afterOperationPointer: string, direction: Direction) => {
    const before = resolve(base, beforeAt, `${operationPointer}/requestBody`);
    const after = resolve(revision, afterAt, `${afterOperationPointer}/requestBody`);
    if (direction === 'request' && after?.node.required === true && before?.node.required !== true) {
      report(before?.pointer ?? operationPointer, before ? 'the request body is now required' : 'a required request body was added');
    }
    if (!before) return;
    if (!after) {
      report(before.pointer, direction === 'request' ? 'the request body was removed' : 'the payload was removed');
      return;
    }
    compareContent(before.node.content, `${before.pointer}/content`, after.node.content, `${after.pointer}/content`, direction);
  };

  const compareResponses = (before: Json | undefined, beforePointer: string, after: Json | undefined, afterPointer: string) => {
    if (!isObject(before)) return;
    const afterResponses = isObject(after) ? after : {};
    for (const [status, response] of Object.entries(before)) {
      const pointer = `${beforePointer}/${segment(status)}`;
      if (!(status in afterResponses)) {
        report(pointer, `status ${status} removed`);
        continue;
      }
      const beforeResponse = resolve(base, response, pointer);
      const afterResponse = resolve(revision, afterResponses[status], `${afterPointer}/${segment(status)}`);
      if (!beforeResponse || !afterResponse) continue;
      const afterHeaders = isObject(afterResponse.node.headers) ? afterResponse.node.headers : {};
      if (isObject(beforeResponse.node.headers)) {
        for (const [name, header] of Object.entries(beforeResponse.node.headers)) {
          const headerPointer = `${beforeResponse.pointer}/headers/${segment(name)}`;
          const counterpart = Object.entries(afterHeaders).find(([other]) => other.toLowerCase() === name.toLowerCase());
          if (!counterpart) {
            report(headerPointer, `response header ${name} removed`);
            continue;
          }
          const beforeHeader = resolve(base, header, headerPointer);
          const afterHeader = resolve(revision, counterpart[1], `${afterResponse.pointer}/headers/${segment(counterpart[0])}`);
          if (beforeHeader && afterHeader) compareSchemas(beforeHeader.node.schema, `${beforeHeader.pointer}/schema`, afterHeader.node.schema, `${afterHeader.pointer}/schema`, 'response');
        }
      }
      compareContent(beforeResponse.node.content, `${beforeResponse.pointer}/content`, afterResponse.node.content, `${afterResponse.pointer}/content`, 'response');
    }
    // A new success status: clients that handle the ones there were get one they do not expect.
    const successes = (responses: JsonObject) => Object.keys(responses).filter((status) => /^2/.test(status));
    const known = successes(before);
    for (const status of successes(afterResponses)) {
      if (!known.includes(status) && known.length > 0) report(beforePointer, `new success status ${status} beside ${known.join(', ')}`);
    }
  };

  // ── Security ──────────────────────────────────────────────────────────────

  /**
   * OpenAPI 3.1, Operation Object `security`: "This definition overrides any
   * declared top-level security. To remove a top-level security declaration,
   * an empty array can be used." Security Requirement Object: "To make
   * security optional, an empty security requirement ({}) can be included
   * in the array."
   */
  const securityOf = (document: JsonObject, operation: JsonObject): JsonObject[] =>
    (Array.isArray(operation.security) ? operation.security : Array.isArray(document.security) ? document.security : []).filter(isObject);
  const isOpen = (requirements: JsonObject[]) => requirements.length === 0 || requirements.some((requirement) => Object.keys(requirement).length === 0);
  const scopesOf = (requirement: JsonObject, scheme: string) => (Array.isArray(requirement[scheme]) ? (requirement[scheme] as Json[]).map(String) : []);

  const compareSecurity = (beforeOperation: JsonObject, afterOperation: JsonObject, pointer: string) => {
    const before = securityOf(base, beforeOperation);
    const after = securityOf(revision, afterOperation);
    if (isOpen(after)) return;
    if (isOpen(before)) {
      report(pointer, 'a credential is now required: the operation was open to anyone');
      return;
    }
    for (const requirement of before) {
      const schemes = Object.keys(requirement);
      // The revision's requirements this credential still meets: those that need no scheme it lacks.
      const kept = after.filter((other) => Object.keys(other).every((scheme) => schemes.includes(scheme)));
      if (kept.length === 0) {
        report(pointer, `a request authorized by ${schemes.join(' and ')} is no longer accepted`);
        continue;
      }
      // Scopes named for the first time are met by the tokens made before them (they carry every scope); added to a list, not.
      const scopesMet = kept.some((other) =>
        Object.keys(other).every((scheme) => {
          const was = scopesOf(requirement, scheme);
          return was.length === 0 || scopesOf(other, scheme).every((scope) => was.includes(scope));
        }),
      );
      if (!scopesMet) {
        const named = kept.map((other) => Object.keys(other).map((scheme) => `${scheme} [${scopesOf(other, scheme).join(', ')}]`).join(' and ')).join(' or ');
        report(pointer, `a token with the scopes of ${schemes.map((scheme) => `${scheme} [${scopesOf(requirement, scheme).join(', ')}]`).join(' and ')} no longer suffices: now ${named}`);
      }
    }
  };

  const comparePathItems = (section: 'paths' | 'webhooks') => {
    const before = isObject(base[section]) ? base[section] : {};
    const after = isObject(revision[section]) ? revision[section] : {};
    for (const [name, item] of Object.entries(before)) {
      const itemPointer = `#/${section}/${segment(name)}`;
      const beforeItem = resolve(base, item, itemPointer);
      const afterItem = resolve(revision, after[name], itemPointer);
      if (!beforeItem) continue;
      for (const method of methods) {
        const operation = beforeItem.node[method];
        if (!isObject(operation)) continue;
        const operationPointer = `${beforeItem.pointer}/${method}`;
        const counterpart = afterItem?.node[method];
        const label = section === 'paths' ? `operation ${method.toUpperCase()} ${name}` : `webhook ${name} (${method.toUpperCase()})`;
        if (!afterItem || !isObject(counterpart)) {
          report(operationPointer, `${label}${typeof operation.operationId === 'string' ? ` (${operation.operationId})` : ''} removed`);
          continue;
        }
        const beforeOperation = { node: operation, pointer: operationPointer };
        const afterOperation = { node: counterpart, pointer: `${afterItem.pointer}/${method}` };
        if (section === 'paths') {
          compareParameters(beforeItem, beforeOperation, afterItem, afterOperation);
          compareRequestBody(operation.requestBody, operationPointer, counterpart.requestBody, afterOperation.pointer, 'request');
          compareResponses(operation.responses, `${operationPointer}/responses`, counterpart.responses, `${afterOperation.pointer}/responses`);
          compareSecurity(operation, counterpart, `${operationPointer}/security`);
        } else {
          // A webhook's request is what the server sends and the partner's receiver reads.
          compareRequestBody(operation.requestBody, operationPointer, counterpart.requestBody, afterOperation.pointer, 'response');
        }
      }
    }
  };

  comparePathItems('paths');
  comparePathItems('webhooks');
  return [...changes.values()];
}

/** What the gate decides: the breaking changes, and whether a new major version allows them. */
export interface Verdict {
  changes: BreakingChange[];
  baseVersion: string;
  revisionVersion: string;
  /** True when there are no breaking changes, or `info.version`'s major went up. */
  ok: boolean;
  /** A report for people: every change with its path, and what to do. */
  text: string;
}

export function judge(base: JsonObject, revision: JsonObject): Verdict {
  const changes = breakingChanges(base, revision);
  const version = (document: JsonObject) => (isObject(document.info) && typeof document.info.version === 'string' ? document.info.version : '(none)');
  const baseVersion = version(base);
  const revisionVersion = version(revision);
  const baseMajor = majorVersion(baseVersion);
  const revisionMajor = majorVersion(revisionVersion);
  const newMajor = baseMajor !== undefined && revisionMajor !== undefined && revisionMajor > baseMajor;
  const list = changes.map((change) => `  ${change.path}\n      ${change.message}`).join('\n');
  let text: string;
  if (changes.length === 0) {
    text = `No breaking change since the released spec ${baseVersion} (now ${revisionVersion}).`;
  } else if (newMajor) {
    text = `${changes.length} breaking change(s) since the released spec ${baseVersion}, allowed by the new major version ${revisionVersion}:\n${list}`;
  } else {
    text =
      `${changes.length} breaking change(s) since the released spec ${baseVersion}, and info.version (${revisionVersion}) is not a new major version:\n${list}\n\n` +
      'Make the change additive (a new optional field, a new operation, a wider type), ' +
      `or raise info.version's major in openapi/openapi.yaml (to ${baseMajor === undefined ? 'the next major' : `${baseMajor + 1}.0.0`}) and say so to partners.`;
  }
  return { changes, baseVersion, revisionVersion, ok: changes.length === 0 || newMajor, text };
}
