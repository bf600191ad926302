/**
 * The studio's routes, in the address bar: each page has its own URL, so a
 * reload, a bookmark, a mailed link and the Back button land where they
 * should. Links inside the studio change the page without a reload
 * (History API); the server answers the same shell for each of these paths
 * (server/pages/studio-shell.ts), so a URL typed in works as well.
 */
import type { ComponentChildren, JSX } from 'preact';
import { useEffect, useState } from 'preact/hooks';

export type Route =
  | { page: 'library' }
  | { page: 'project'; projectid: string }
  | { page: 'links' }
  | { page: 'link'; playerid: string }
  | { page: 'inbox' }
  | { page: 'settings' }
  | { page: 'admin' }
  | { page: 'not-found' };

/** The route of a path below the base path. */
export function routeOf(path: string): Route {
  const parts = path.split('/').filter(Boolean).map(decodeURIComponent);
  if (parts.length === 0) return { page: 'library' };
  if (parts[0] === 'projects' && parts.length === 2) return { page: 'project', projectid: parts[1] };
  if (parts[0] === 'links' && parts.length === 1) return { page: 'links' };
  if (parts[0] === 'links' && parts.length === 2) return { page: 'link', playerid: parts[1] };
  if (parts[0] === 'inbox' && parts.length === 1) return { page: 'inbox' };
  if (parts[0] === 'settings' && parts.length === 1) return { page: 'settings' };
  if (parts[0] === 'admin' && parts.length === 1) return { page: 'admin' };
  return { page: 'not-found' };
}

const CHANGE = 'studio:navigate';

/** Go to a studio path (below the base path) without a reload. */
export function navigate(href: string, { replace = false } = {}): void {
  if (replace) history.replaceState(null, '', href);
  else history.pushState(null, '', href);
  window.dispatchEvent(new Event(CHANGE));
}

/** The current location, redrawn on navigation and on Back/Forward. */
export function useLocation(): URL {
  const [url, setUrl] = useState(() => new URL(window.location.href));
  useEffect(() => {
    const update = () => setUrl(new URL(window.location.href));
    window.addEventListener('popstate', update);
    window.addEventListener(CHANGE, update);
    return () => {
      window.removeEventListener('popstate', update);
      window.removeEventListener(CHANGE, update);
    };
  }, []);
  return url;
}

/** A link inside the studio: an ordinary <a href> (it opens in a new tab as one), followed without a reload on a plain click. */
export function Link({ href, children, ...rest }: { href: string; children: ComponentChildren } & Omit<JSX.HTMLAttributes<HTMLAnchorElement>, 'href'>) {
  const onClick = (event: MouseEvent) => {
    if (event.defaultPrevented || event.button !== 0 || event.metaKey || event.ctrlKey || event.shiftKey || event.altKey) return;
    event.preventDefault();
    navigate(href);
  };
  return (
    <a href={href} onClick={onClick} {...rest}>
      {children}
    </a>
  );
}
