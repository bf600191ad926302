/**
 * The HTML the server sends for /p/{playerid} and /embed/{playerid}: a shell
 * that loads the bundled page (web/player/) and names the player and the API
 * on its root element. The page draws itself from the API; the shell carries
 * only what must be in the HTML itself, the link preview's Open Graph and
 * Twitter card tags (https://ogp.me, "The Open Graph protocol"), which chat
 * apps read without running scripts.
 *
 * Every value is escaped for its place: a player's name is its owner's text.
 */
import { escapeHtml } from '../lib/html.ts';
import type { PlayerPreview } from '../resources/listening/preview-service.ts';
import { assetHref } from './page-assets.ts';


export interface ShellOptions {
  basePath: string;
  publicUrl: string;
  playerId: string;
  embed: boolean;
  preview: PlayerPreview;
  /** The player's upload portal, when it is open: the page links to it. */
  portalUrl?: string;
}

export function renderShell({ basePath, publicUrl, playerId, embed, preview, portalUrl }: ShellOptions): string {
  const pageUrl = `${publicUrl}/p/${encodeURIComponent(playerId)}`;
  const meta: Array<[string, string, string]> = [
    ['property', 'og:type', 'music.playlist'],
    ['property', 'og:title', preview.title],
    ['property', 'og:description', preview.description],
    ['property', 'og:url', pageUrl],
    ['property', 'og:site_name', 'Audio Share'],
    ['name', 'twitter:card', preview.image ? 'summary_large_image' : 'summary'],
    ['name', 'twitter:title', preview.title],
    ['name', 'twitter:description', preview.description],
  ];
  if (preview.image) meta.push(['property', 'og:image', preview.image], ['name', 'twitter:image', preview.image]);
  const tags = meta.map(([attribute, key, value]) => `<meta ${attribute}="${key}" content="${escapeHtml(value)}">`).join('\n    ');
  return `<!doctype html>
<html lang="en">
  <head>
    <meta charset="utf-8">
    <meta name="viewport" content="width=device-width, initial-scale=1">
    <meta name="robots" content="noindex">
    <title>${escapeHtml(preview.title)}</title>
    <meta name="description" content="${escapeHtml(preview.description)}">
    ${tags}
    <link rel="icon" href="${basePath}/favicon.ico" sizes="any">
    <link rel="icon" href="${assetHref(basePath, 'icon.svg')}" type="image/svg+xml">
    <link rel="stylesheet" href="${assetHref(basePath, 'player.css')}">
    <script type="module" src="${assetHref(basePath, 'player.js')}"></script>
  </head>
  <body${embed ? ' class="embed"' : ''}>
${portalUrl ? `    <nav class="portal-link"><a href="${escapeHtml(portalUrl)}">Send files to this player's owner</a></nav>
` : ''}    <main id="app" data-state="loading" data-player-id="${escapeHtml(playerId)}" data-api-base="${basePath}/api/v1" data-page-url="${escapeHtml(pageUrl)}"${embed ? ' data-embed="true"' : ''}>
      <p class="loading">Loading the player…</p>
      <noscript><p>This player needs JavaScript to play audio.</p></noscript>
    </main>
  </body>
</html>
`;
}
