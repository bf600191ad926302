/**
 * A fetch that checks every response from the API under test against the
 * spec, and records which operation answered with which status, so that the
 * suite's teardown can tell whether every operation was called both validly
 * and invalidly. A response that breaks the spec makes the call throw.
 */
import { appendFileSync } from 'node:fs';
import { checkResponse, findRoute } from './spec-validator.ts';

export function validatingFetch(baseUrl: string, coverageFile: string | undefined): typeof fetch {
  const base = new URL(baseUrl);
  const basePath = base.pathname.replace(/\/$/, '');
  return async (input, init) => {
    const request = new Request(input, init);
    const response = await fetch(request);
    const url = new URL(request.url);
    if (url.origin !== base.origin || !url.pathname.startsWith(basePath)) return response;
    const route = findRoute(request.method, url.pathname.slice(basePath.length) || '/');
    if (!route) throw new Error(`${request.method} ${url.pathname} is not an operation of the spec`);
    const text = await response.clone().text();
    const contentType = response.headers.get('content-type');
    let body: unknown;
    if (text.length > 0 && /json/.test(contentType ?? '')) {
      try {
        body = JSON.parse(text);
      } catch {
        throw new Error(`${route.operationId} answered ${response.status} with a body that is not JSON: ${text.slice(0, 200)}`);
      }
    }
    const violations = checkResponse(route, response.status, contentType, body, response.headers);
    if (violations.length > 0) {
      throw new Error(`Response breaks the spec:\n  ${violations.join('\n  ')}\nBody: ${text.slice(0, 500)}`);
    }
    if (coverageFile) appendFileSync(coverageFile, JSON.stringify({ operationId: route.operationId, status: response.status }) + '\n');
    return response;
  };
}
