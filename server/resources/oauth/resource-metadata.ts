/**
 * RFC 9728 §2: a protected resource's metadata, as the server serves it for
 * the API and the MCP server, and the mock for its API.
 */
import { appScopes } from './oauth-scopes.ts';

/**
 * `resourcePath` is where the resource lives under `publicUrl` (/api/v1, or the MCP server's /mcp);
 * `authorizationServers` are the issuers of the tokens it takes: this server's own, or none on the mock, which takes
 * any token. `scopes` are those an app may be granted there (RFC 9728 §2, scopes_supported: "scope values ... used in
 * authorization requests to request access to this protected resource"): `admin` only where the operator allows it.
 */
export function protectedResourceMetadata(publicUrl: string, resourcePath: string, name: string, authorizationServers: string[], scopes: readonly string[] = appScopes(false)) {
  const base = publicUrl.replace(/\/+$/, '');
  return {
    resource: `${base}${resourcePath}`,
    // RFC 9728 §2: "authorization_servers OPTIONAL": left out where no authorization server issues the tokens.
    ...(authorizationServers.length > 0 ? { authorization_servers: authorizationServers } : {}),
    scopes_supported: [...scopes],
    bearer_methods_supported: ['header'],
    resource_name: name,
    resource_documentation: `${base}/docs`,
  };
}
