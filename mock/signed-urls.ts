/**
 * The spec's examples hold absolute URLs of a real server (upload `url`,
 * download `url`, artwork `url`, peaks `url`: `http://localhost:8080/api/v1/…`).
 * Served as they are, they would send a partner's next request away from
 * the mock. Every string of a JSON body that is an absolute http(s) URL whose
 * path starts with `/api/v1/` is moved onto the mock's own base, keeping its
 * path and query, so that following it reaches the mock, exactly as
 * following the server's reaches the server. Other URLs (`playerUrl`, a page
 * the mock does not serve) are left alone.
 */
export function rewriteApiUrls(value: unknown, base: string): unknown {
  if (typeof value === 'string') return rewriteApiUrl(value, base);
  if (Array.isArray(value)) return value.map((item) => rewriteApiUrls(item, base));
  if (value !== null && typeof value === 'object') {
    return Object.fromEntries(Object.entries(value).map(([key, item]) => [key, rewriteApiUrls(item, base)]));
  }
  return value;
}

/** `base` is the mock's public URL without a trailing slash, for example `http://127.0.0.1:4010`. */
export function rewriteApiUrl(text: string, base: string): string {
  if (!/^https?:\/\//i.test(text)) return text;
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    return text;
  }
  if (!url.pathname.startsWith('/api/v1/')) return text;
  return base + url.pathname + url.search + url.hash;
}
