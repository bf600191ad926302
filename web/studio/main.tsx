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

const root = document.getElementById('studio')!;
render(<App studio={studioOf(root.dataset.apiBase!, root.dataset.basePath ?? '')} />, root);
