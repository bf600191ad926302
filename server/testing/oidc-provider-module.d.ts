/**
 * The part of oidc-provider (v9, a test-only dependency) that
 * server/testing/oidc-provider.ts uses. The package ships no types, and
 * @types/oidc-provider would be a dependency for one file.
 */
declare module 'oidc-provider' {
  import type { IncomingMessage, ServerResponse } from 'node:http';

  export interface AccountClaims {
    sub: string;
    [claim: string]: unknown;
  }

  export interface Account {
    accountId: string;
    claims(use: string, scope: string): Promise<AccountClaims> | AccountClaims;
  }

  export interface ClientMetadata {
    client_id: string;
    client_secret?: string;
    redirect_uris: string[];
    grant_types?: string[];
    response_types?: string[];
    token_endpoint_auth_method?: string;
  }

  export interface Adapter {
    upsert(id: string, payload: object, expiresIn?: number): Promise<void>;
  }

  export interface Configuration {
    clients?: ClientMetadata[];
    jwks?: { keys: object[] };
    cookies?: { keys?: string[] };
    claims?: Record<string, string[] | null>;
    conformIdTokenClaims?: boolean;
    pkce?: { required?: (ctx: unknown, client: unknown) => boolean };
    features?: { devInteractions?: { enabled: boolean } };
    ttl?: Record<string, number>;
    findAccount?: (ctx: unknown, sub: string) => Promise<Account | undefined> | Account | undefined;
  }

  export class Provider {
    constructor(issuer: string, configuration?: Configuration);
    readonly issuer: string;
    readonly Client: { readonly adapter: Adapter };
    callback(): (req: IncomingMessage, res: ServerResponse) => void;
    on(event: string, listener: (...args: unknown[]) => void): this;
  }

  export default Provider;
}
