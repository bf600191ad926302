/**
 * The docs page and the spec as a server serves them: naming that server.
 * generated/docs.html and generated/openapi.json are built once for every
 * server, so their first server is the default address of `npm start`
 * (http://localhost:8080), and every request sample calls it. A reader of
 * the docs of a server at another address (the sandbox on 8090, a
 * deployment behind its own domain) would copy samples that miss it. So the
 * served copies put the server's own PUBLIC_URL in its place: first in the
 * servers list, described as this server, and in every sample.
 */
import { readFileSync, statSync } from 'node:fs';
import type { NextFunction, Request, Response } from 'express';
import { changelogPolicy, docsPolicy } from './security-headers.ts';

/** The first server of the built spec, whose address the served copies replace. */
export const BUILT_SERVER_URL = 'http://localhost:8080';
/** What the built spec says of its first server, in the JSON and in the page's HTML. */
const BUILT_SERVER_DESCRIPTION = "A server started with npm start, at its default address. Any other server's API is at its own origin followed by /api/v1.";
const THIS_SERVER_DESCRIPTION = 'This server: the one that serves these docs.';

const htmlEscaped = (text: string) => text.replaceAll("'", '&#x27;');

/** `text` (the docs page or the spec) naming `publicUrl` where it named the default address. */
export function namingThisServer(text: string, publicUrl: string): string {
  // PUBLIC_URL is an http(s) origin (config.ts checks it), with nothing to escape in HTML or JSON;
  // anything else is left as built rather than written into a page.
  if (publicUrl === BUILT_SERVER_URL || !/^https?:\/\/[\w.\-:[\]]+(?:\/[\w.~\-/]*)?$/.test(publicUrl)) return text;
  return text
    .replaceAll(BUILT_SERVER_DESCRIPTION, THIS_SERVER_DESCRIPTION)
    .replaceAll(htmlEscaped(BUILT_SERVER_DESCRIPTION), THIS_SERVER_DESCRIPTION)
    .replaceAll(BUILT_SERVER_URL, publicUrl);
}

/** The server's address, read per request: a server that listens on port 0 learns its PUBLIC_URL once it listens. */
type PublicUrl = { publicUrl: string };

/** Serves `file` rewritten for the server's PUBLIC_URL, remade when the file or the address changes, with the headers `extra` gives for the text. */
function servedCopy(file: string, config: PublicUrl, type: string, extra: (text: string) => Record<string, string> = () => ({})) {
  let cached: { mtimeMs: number; publicUrl: string; text: string; headers: Record<string, string> } | undefined;
  return (_req: Request, res: Response, next: NextFunction) => {
    try {
      const { mtimeMs } = statSync(file);
      const { publicUrl } = config;
      if (cached?.mtimeMs !== mtimeMs || cached.publicUrl !== publicUrl) {
        const text = namingThisServer(readFileSync(file, 'utf8'), publicUrl);
        cached = { mtimeMs, publicUrl, text, headers: extra(text) };
      }
      res.type(type).set(cached.headers).send(cached.text);
    } catch (error) {
      next(error);
    }
  };
}

/** The docs page, under a CSP that allows its inline scripts (as served, rewritten) by their hashes. */
export const servedDocsPage = (file: string, config: PublicUrl) => servedCopy(file, config, 'html', (html) => ({ 'Content-Security-Policy': docsPolicy(html) }));

/** The changelog page, under a CSP that allows no script and its one stylesheet by its hash. */
export const servedChangelog = (file: string, config: PublicUrl) => servedCopy(file, config, 'html', (html) => ({ 'Content-Security-Policy': changelogPolicy(html) }));

/** The bundled spec. */
export const servedSpec = (file: string, config: PublicUrl) => servedCopy(file, config, 'json');
