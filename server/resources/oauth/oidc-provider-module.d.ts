/**
 * The part of oidc-provider (v9) that this server uses: the authorization
 * server (server/resources/oauth/) and the tests' OpenID provider
 * (server/testing/oidc-provider.ts). The package ships no types, and
 * @types/oidc-provider lags its releases; these are checked against its
 * source (lib/) and docs/README.md.
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
    client_name?: string;
    redirect_uris: string[];
    grant_types?: string[];
    response_types?: string[];
    token_endpoint_auth_method?: string;
    application_type?: 'web' | 'native';
    [key: string]: unknown;
  }

  /** The storage interface of every model (example/my_adapter.js). */
  export interface Adapter {
    upsert(id: string, payload: AdapterPayload, expiresIn?: number): Promise<void>;
    find(id: string): Promise<AdapterPayload | undefined>;
    findByUserCode(userCode: string): Promise<AdapterPayload | undefined>;
    findByUid(uid: string): Promise<AdapterPayload | undefined>;
    consume(id: string): Promise<void>;
    destroy(id: string): Promise<void>;
    revokeByGrantId(grantId: string): Promise<void>;
  }

  export interface AdapterPayload {
    [key: string]: unknown;
    accountId?: string;
    clientId?: string;
    grantId?: string;
    uid?: string;
    userCode?: string;
    jti?: string;
    exp?: number;
    scope?: string;
    aud?: string | string[];
    consumed?: number;
  }

  export interface KoaContextWithOIDC {
    req: IncomingMessage;
    res: ServerResponse;
    type: string;
    body: unknown;
    status: number;
    oidc: {
      route?: string;
      client?: Client;
      params?: Record<string, unknown>;
      result?: { consent?: unknown };
      /** The models the request loaded (RefreshToken, Grant, Client…). */
      entities?: Record<string, unknown>;
      [key: string]: unknown;
    };
  }

  export interface ResourceServer {
    scope: string;
    audience?: string;
    accessTokenTTL?: number;
    accessTokenFormat?: 'opaque' | 'jwt';
  }

  export interface Configuration {
    adapter?: new (name: string) => Adapter;
    clients?: ClientMetadata[];
    jwks?: { keys: object[] };
    cookies?: { keys?: string[]; long?: Record<string, unknown>; short?: Record<string, unknown> };
    claims?: Record<string, string[] | null>;
    conformIdTokenClaims?: boolean;
    pkce?: { required?: (ctx: KoaContextWithOIDC, client: Client) => boolean };
    features?: Record<string, Record<string, unknown>>;
    ttl?: Record<string, number>;
    findAccount?: (ctx: KoaContextWithOIDC, sub: string) => Promise<Account | undefined> | Account | undefined;
    [option: string]: unknown;
  }

  export interface Client {
    clientId: string;
    clientName?: string;
    applicationType: 'web' | 'native';
    clientAuthMethod: string;
    grantTypeAllowed(type: string): boolean;
    metadata(): ClientMetadata;
  }

  export interface Grant {
    accountId: string;
    clientId: string;
    addOIDCScope(scope: string): void;
    addResourceScope(resource: string, scope: string): void;
    save(): Promise<string>;
  }

  export interface InteractionDetails {
    uid: string;
    prompt: { name: string; reasons: string[]; details: Record<string, unknown> };
    params: Record<string, unknown> & { client_id: string; redirect_uri?: string; scope?: string; resource?: string | string[] };
    session?: { accountId?: string };
    grantId?: string;
  }

  export interface InteractionResults {
    login?: { accountId: string };
    consent?: { grantId?: string };
    error?: string;
    error_description?: string;
  }

  export class Provider {
    constructor(issuer: string, configuration?: Configuration);
    readonly issuer: string;
    proxy: boolean;
    readonly Client: { readonly adapter: Adapter; find(id: string): Promise<Client | undefined> };
    readonly Grant: { new (properties: { accountId: string; clientId: string }): Grant; find(id: string): Promise<Grant | undefined> };
    callback(): (req: IncomingMessage, res: ServerResponse) => void;
    on(event: string, listener: (...args: unknown[]) => void): this;
    use(middleware: (ctx: KoaContextWithOIDC, next: () => Promise<void>) => Promise<void>): void;
    interactionDetails(req: IncomingMessage, res: ServerResponse): Promise<InteractionDetails>;
    interactionFinished(req: IncomingMessage, res: ServerResponse, result: InteractionResults, options?: { mergeWithLastSubmission?: boolean }): Promise<void>;
  }

  export class Check {
    constructor(reason: string, description: string, check: (ctx: KoaContextWithOIDC) => symbol | boolean);
    static readonly REQUEST_PROMPT: symbol;
    static readonly NO_NEED_TO_PROMPT: symbol;
  }

  export interface Prompt {
    name: string;
    checks: Check[] & { add(check: Check, index?: number): void };
  }

  export const interactionPolicy: {
    Check: typeof Check;
    base(): Prompt[] & { get(name: string): Prompt | undefined };
  };

  export const errors: {
    InvalidTarget: new (description?: string) => Error;
    InvalidScope: new (description: string, scope: string) => Error;
    InvalidRedirectUri: new () => Error & { error_description: string };
    InvalidClientMetadata: new (description?: string) => Error;
    SessionNotFound: new (description?: string) => Error;
  };

  export default Provider;
}
