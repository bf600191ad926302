/**
 * The scopes the spec gives each operation (generated/openapi.json, the
 * bundle of openapi/). The server takes an operation's required scope from
 * its `oauth2` requirement, and the docs show them: this holds the spec to
 * the rules the issue sets.
 *
 * - "The spec says, for every operation, the scopes it needs: an OAuth 2
 *   security scheme whose scopes these are": the `oauth2` scheme declares
 *   exactly the token scopes (`admin` among them, issue 28), and every operation a token may call names one
 *   of them, the same under `bearerAuth` and `oauth2`.
 * - "The API accepts the session cookie for every operation a token may
 *   call": each of them also lists `sessionCookie` (but the sandbox's
 *   reset, whose accounts are named by their tokens).
 * - Reads (GET) need a `:read` scope, every other method a `:write` one; the
 *   scope's family follows the operation's tag; the administration needs `admin`.
 * - An operation that takes no token is either one of sign-in's (under
 *   /auth/), account management that needs a signed-in session (under
 *   /auth/, /me/ or /admin/: a leaked token cannot mint more), or one of
 *   those listed here, authorized otherwise (signed URLs, the portal, the
 *   payment provider's webhook, the player session's own operations); so
 *   an operation of the API added without a scope fails.
 */
import { describe, expect, it } from 'vitest';
import { ACCOUNT_SCHEMES, SCOPES, scopedOperations, spec, specOperations as operations, TOKEN_SCHEMES } from '../testing/spec-scopes.ts';

/** Which family of scopes each tag's operations need (the issue: uploads, downloads and artwork are projects'; collaborators, paywalls and portals players'). */
const FAMILY_OF_TAG: Record<string, string> = {
  Players: 'players',
  Files: 'projects',
  Projects: 'projects',
  Account: 'account',
  Listening: 'players',
  Comments: 'comments',
  Webhooks: 'webhooks',
  Sandbox: 'account',
  // The server's administration is its own scope, which account:* does not give (issue 28).
  Administration: 'admin',
  // Apps and the apps a person let in are the account's own settings (issue 22: registered "in the studio's settings").
  Apps: 'account',
};

/** The operations no account credential reaches, and what authorizes them instead. */
const WITHOUT_ACCOUNT: Record<string, string> = {
  uploadFile: 'a signed URL',
  uploadArtwork: 'a signed URL',
  fetchSignedDownload: 'a signed URL',
  receiveStripeEvent: "the payment provider's signature",
  createPortalUpload: "the portal's link",
  getPortalCapabilities: "the portal's link",
  getPortalUploadOffset: "the portal's link",
  appendPortalUpload: "the portal's link",
  cancelPortalUpload: "the portal's link",
  getProjectUploadCapabilities: 'nothing: the server\'s tus capabilities, the same for every project (and what a browser asks without credentials)',
  openPlayerSession: "the player's link (a password, an invite, a name)",
  closePlayerSession: 'the player session cookie',
  createPlayerCheckout: 'the player session cookie',
};

/** The reads that are part of sending something, and take the scope it is sent with. */
const SENDS_WITH_WRITE: Record<string, string> = {
  getProjectUploadOffset: 'a tus client resumes an upload (HEAD) with the token it sends the upload with',
};

/** The operations a token may call that the session may not, and why. */
const TOKEN_ONLY: Record<string, string> = {
  resetSandbox: 'a sandbox account is named by its token, and nobody signs in to one',
};

describe('scopes in the spec', () => {
  it('declares exactly the token scopes (TokenScope, admin among them) on the oauth2 scheme, each described', () => {
    const oauth2 = spec.components.securitySchemes.oauth2;
    expect(oauth2.type).toBe('oauth2');
    const scopes = oauth2.flows?.authorizationCode?.scopes ?? {};
    expect(Object.keys(scopes).sort()).toEqual([...SCOPES].sort());
    for (const [scope, description] of Object.entries(scopes)) expect(description.length, scope).toBeGreaterThan(10);
    expect(spec.components.securitySchemes.sessionCookie).toMatchObject({ type: 'apiKey', in: 'cookie', name: 'as_session' });
    expect(spec.components.securitySchemes.bearerAuth).toMatchObject({ type: 'http', scheme: 'bearer' });
  });

  it('gives every operation a token may call exactly one of them, the same under bearerAuth and oauth2, with the session beside', () => {
    const faults: string[] = [];
    for (const { path, method, operation } of operations) {
      const security = operation.security;
      const label = `${operation.operationId} (${method.toUpperCase()} ${path})`;
      // Each operation says it itself: an inherited top-level default would name no scope.
      if (security === undefined) {
        faults.push(`${label}: no security of its own`);
        continue;
      }
      // Operations no token may call are the next tests' business.
      if (!security.some((requirement) => TOKEN_SCHEMES.some((scheme) => scheme in requirement))) continue;
      const account = security.filter((requirement) => ACCOUNT_SCHEMES.some((scheme) => scheme in requirement));
      // Alternatives, one scheme each: a token (bearer or OAuth) or the session; never two schemes that must both be sent.
      for (const requirement of account) if (Object.keys(requirement).length !== 1) faults.push(`${label}: ${JSON.stringify(requirement)} joins schemes`);
      const of = (scheme: string) => account.filter((requirement) => scheme in requirement).map((requirement) => requirement[scheme]);
      const [bearer, oauth2, session] = [of('bearerAuth'), of('oauth2'), of('sessionCookie')];
      if (oauth2.length !== 1 || oauth2[0].length !== 1 || !(SCOPES as readonly string[]).includes(oauth2[0][0])) faults.push(`${label}: oauth2 names ${JSON.stringify(oauth2)}, not one of the token scopes`);
      else if (bearer.length !== 1 || JSON.stringify(bearer[0]) !== JSON.stringify(oauth2[0])) faults.push(`${label}: bearerAuth names ${JSON.stringify(bearer)}, oauth2 ${JSON.stringify(oauth2[0])}`);
      if (TOKEN_ONLY[operation.operationId]) {
        if (session.length !== 0) faults.push(`${label}: takes the session, though ${TOKEN_ONLY[operation.operationId]}`);
      } else if (session.length !== 1 || session[0].length !== 0) faults.push(`${label}: sessionCookie is ${JSON.stringify(session)}, not [] once`);
    }
    expect(faults).toEqual([]);
  });

  it('needs :read to read and :write to change, of the family its tag says', () => {
    const faults: string[] = [];
    for (const { path, method, operationId, scope, tag } of scopedOperations) {
      const reads = (method === 'get' || method === 'head') && !SENDS_WITH_WRITE[operationId];
      const family = FAMILY_OF_TAG[tag ?? ''];
      // admin has no :read and :write: administering is one right, read or write.
      const expected = family === 'admin' ? 'admin' : `${family}:${reads ? 'read' : 'write'}`;
      if (scope !== expected) faults.push(`${operationId} (${method.toUpperCase()} ${path}, tag ${tag}): ${scope}, expected ${expected}`);
    }
    expect(faults).toEqual([]);
  });

  it('documents the 403 a token without the scope gets, on every operation that names one', () => {
    const undocumented = scopedOperations.filter(({ path, method }) => !spec.paths[path][method].responses['403']).map(({ operationId }) => operationId);
    expect(undocumented).toEqual([]);
  });

  it('takes no account credential only on sign-in (/auth/) and the operations authorized otherwise (signed URLs, portal, webhook, player session)', () => {
    const without = operations.filter(({ operation }) => !(operation.security ?? []).some((requirement) => ACCOUNT_SCHEMES.some((scheme) => scheme in requirement)));
    const unexplained = without.filter(({ path, operation }) => !path.startsWith('/auth/') && !WITHOUT_ACCOUNT[operation.operationId]);
    expect(unexplained.map(({ operation }) => operation.operationId)).toEqual([]);
    // The list holds no operation that is gone, or that has since gained a credential.
    expect(Object.keys(WITHOUT_ACCOUNT).filter((operationId) => !without.some(({ operation }) => operation.operationId === operationId))).toEqual([]);
  });

  it('takes the session without a token only for signing in and managing the account (/auth/, /me and under it, /admin/, /apps)', () => {
    const sessionOnly = operations.filter(({ operation }) => {
      const security = operation.security ?? [];
      return security.some((requirement) => 'sessionCookie' in requirement) && !security.some((requirement) => TOKEN_SCHEMES.some((scheme) => scheme in requirement));
    });
    expect(sessionOnly.length).toBeGreaterThan(0);
    // Registering and deleting apps is the account's management too (issue 28: "managing apps and connected apps needs a signed-in session").
    expect(sessionOnly.filter(({ path }) => !/^\/(auth|me|admin|apps)(\/|$)/.test(path)).map(({ operation }) => operation.operationId)).toEqual([]);
  });

  it('keeps the listener operations open to anyone: a token there is checked only when one is sent', () => {
    // The view and the player's comments take a member's token or session, a player session, or nothing.
    const open = scopedOperations.filter((operation) => operation.open).map(({ operationId }) => operationId);
    expect(open.sort()).toEqual(['createPlayerComment', 'deletePlayerComment', 'getPlayerView', 'listPlayerComments', 'recordPlay', 'updatePlayerComment']);
  });

  it('leaves the webhook callbacks, which the server sends, without security', () => {
    for (const [name, item] of Object.entries(spec.webhooks)) expect(item.post.security, name).toEqual([]);
  });

  it('offers the token, OAuth and the session as the top-level default', () => {
    expect(spec.security).toEqual([{ bearerAuth: [] }, { oauth2: [] }, { sessionCookie: [] }]);
  });
});
