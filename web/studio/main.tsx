/**
 * The studio: the musician's own app (library, projects, uploads, sharing,
 * inbox, settings), a client of the public API and nothing else. The server
 * answers the same shell for each of its paths (server/pages/studio-shell.ts)
 * and this app draws the page the path names. Preact components: why, in
 * docs/decisions/studio-framework.md.
 */
import './studio.css';
import { render } from 'preact';
import { studioOf } from './api.ts';
import { App } from './app.tsx';
import { firstScreen } from './library.tsx';
import { projectReads } from './project/project-page.tsx';
import { routeOf } from './router.tsx';

const root = document.getElementById('studio')!;
const studio = studioOf(root.dataset.apiBase!, root.dataset.basePath ?? '');
// The page's own first reads go out with GET /me, not after it: the page takes them (api.ts `early`) once drawn.
const route = routeOf(window.location.pathname.slice(studio.basePath.length));
if (route.page === 'library') studio.early.set('library', firstScreen(studio));
if (route.page === 'project') for (const { key, start } of Object.values(projectReads(studio, route.projectid))) studio.early.set(key, start());
render(<App studio={studio} />, root);
