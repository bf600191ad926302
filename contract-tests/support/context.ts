/**
 * What every contract test needs: the target's base URL and token (given by
 * the global setup), a typed client whose responses are checked against the
 * spec, and a raw fetch that is checked the same way.
 */
import { inject } from 'vitest';
import { createApiClient, type ApiClient } from '../../generated/client.ts';
import { validatingFetch } from './validating-fetch.ts';

declare module 'vitest' {
  export interface ProvidedContext {
    baseUrl: string;
    token: string;
    /** `mock` for the partner mock; otherwise the name of the real server's store. */
    target: string;
    coverageFile: string;
    /**
     * The token of an account of its own for the property-based checks, whose
     * made-up requests (preferences among them) must not change what the other
     * tests' account starts from; the same token where the suite has only one.
     */
    propertiesToken: string;
    /**
     * The token of an account of its own for the Arazzo workflows (workflows.test.ts), which a partner
     * would hold: what they make (projects, a webhook on project.created) must not reach the other tests.
     */
    workflowsToken: string;
    /** The signing secret of the real servers' Stripe webhook endpoint, to sign the events the tests send. */
    stripeWebhookSecret: string;
    /** An account that signs in with a password (the session tests'). */
    account: { name: string; email: string; password: string };
    /** An invitation to sign up with, for contract-invited@example.com. */
    invite: string;
    /** An account whose address is not verified yet (its token), and its reset and verification links' tokens. */
    mailed: { token: string; reset: string; verify: string };
    /** An invitation to sign up with, for contract-passkeys@example.com (the passkey tests' account). */
    passkeyInvite: string;
    /** A token of an administrator of the server (on a real server, the first account's, made through the setup link). */
    adminToken: string;
  }
}

export const baseUrl = inject('baseUrl');
export const token = inject('token');
export const target = inject('target');
export const stripeWebhookSecret = inject('stripeWebhookSecret');
export const account = inject('account');
export const invite = inject('invite');
export const mailed = inject('mailed');
export const passkeyInvite = inject('passkeyInvite');
export const adminToken = inject('adminToken');
/** The mock answers with the spec's examples and keeps no state. */
export const onMock = target === 'mock';
export const checkedFetch = validatingFetch(baseUrl, inject('coverageFile'));

export function client(withToken: string | undefined = token): ApiClient {
  return createApiClient({ baseUrl, token: withToken, fetch: checkedFetch });
}

/** An authenticated raw request, for inputs the typed client would not let us send. */
export function raw(path: string, init: RequestInit & { token?: string | null } = {}): Promise<Response> {
  const headers = new Headers(init.headers);
  const bearer = init.token === undefined ? token : init.token;
  if (bearer) headers.set('Authorization', `Bearer ${bearer}`);
  return checkedFetch(baseUrl + path, { ...init, headers });
}

/**
 * @deprecated Signed URLs are used exactly as returned, against the mock too:
 * the mock's answers lead back to the mock. Kept, as the identity, until no
 * test calls it.
 */
export function resolveSignedUrl(url: string): string {
  return url;
}

/** A request to a signed URL: no bearer token, checked against the spec like every other call. */
export function fetchSigned(url: string, init: RequestInit = {}): Promise<Response> {
  return checkedFetch(url, init);
}

export { onePixelPng } from '../../server/testing/fixtures.ts';
