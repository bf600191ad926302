/**
 * The HTML of the player pages. Every value from a user is escaped. No
 * inline script or style: the script and the stylesheet are static files
 * (page-assets.ts), as the pages' CSP (page-security.ts) requires.
 */
import { assetHref } from './page-assets.ts';

export interface PageTrack {
  id: string;
  name: string;
  subtitle: string;
  /** Signed streaming URLs by quality; the page plays one of them. Empty for a file that is not played inline. */
  streams: Partial<Record<'original' | 'compressed' | 'lossless', string>>;
  downloadUrl?: string;
}

const escapeHtml = (text: string) => text.replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c]!);

/** Only a plain hex colour reaches the page; the player colour is validated by the spec, this is a second fence. */
const HEX_COLOR = /^#[0-9a-fA-F]{3,8}$/;

function layout(page: { basePath: string; title: string; body: string; accent?: string; script?: boolean }): string {
  const accent = page.accent && HEX_COLOR.test(page.accent) ? ` data-accent="${escapeHtml(page.accent)}"` : '';
  const script = page.script ? `\n<script src="${escapeHtml(assetHref(page.basePath, 'player.js'))}" defer></script>` : '';
  return `<!doctype html>
<html lang="en"${accent}>
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="referrer" content="no-referrer">
<title>${escapeHtml(page.title)}</title>
<link rel="icon" href="${escapeHtml(assetHref(page.basePath, 'icon.svg'))}" type="image/svg+xml">
<link rel="stylesheet" href="${escapeHtml(assetHref(page.basePath, 'player.css'))}">${script}
</head>
<body><main>${page.body}</main></body>
</html>`;
}

export function renderPlayerPage(page: { basePath: string; name: string; color: string; projectName: string; artwork?: string; tracks: PageTrack[] }): string {
  const tracks = page.tracks
    .map((track) => {
      const streams = Object.entries(track.streams);
      return `<li class="track" data-box-id="${escapeHtml(track.id)}">
  <div class="track-name">${escapeHtml(track.name)}</div>
  ${track.subtitle ? `<div class="subtitle">${escapeHtml(track.subtitle)}</div>` : ''}
  ${streams.length > 0 ? `<audio controls preload="metadata"${streams.map(([quality, url]) => ` data-${quality}="${escapeHtml(url!)}"`).join('')}></audio>` : ''}
  ${track.downloadUrl ? `<a class="download" href="${escapeHtml(track.downloadUrl)}" download>Download</a>` : ''}
</li>`;
    })
    .join('\n');
  const artwork = page.artwork ? `<img class="artwork" src="${escapeHtml(page.artwork)}" alt="Artwork of ${escapeHtml(page.projectName)}">` : '';
  return layout({
    basePath: page.basePath,
    title: page.name,
    accent: page.color,
    script: true,
    body: `<header>${artwork}<div><h1>${escapeHtml(page.name)}</h1><div class="project">${escapeHtml(page.projectName)}</div></div></header>
<ol class="tracks">${tracks || '<li class="empty">No tracks yet.</li>'}</ol>`,
  });
}

/** Why the sign-in page is shown again: a token that opens nothing, or a session that no longer holds. */
export type SignInNotice = 'token-refused' | 'session-ended' | undefined;

export function renderSignInPage(page: { basePath: string; name: string; playerId: string; notice: SignInNotice }): string {
  const notice =
    page.notice === 'token-refused'
      ? '<p class="error">That token does not give access to this player.</p>'
      : page.notice === 'session-ended'
        ? '<p class="error">Your session on this player has ended. Sign in again.</p>'
        : '';
  return layout({
    basePath: page.basePath,
    title: page.name,
    body: `<h1>${escapeHtml(page.name)}</h1>
<p>This player is for invited collaborators only. Sign in with your access token.</p>
${notice}
<form method="post" action="${escapeHtml(`${page.basePath}/p/${encodeURIComponent(page.playerId)}/session`)}">
  <input name="token" type="password" autocomplete="off" placeholder="Access token" aria-label="Access token" required>
  <button type="submit">Open</button>
</form>`,
  });
}

export function renderMessagePage(page: { basePath: string; title: string; message: string }): string {
  return layout({ basePath: page.basePath, title: page.title, body: `<h1>${escapeHtml(page.title)}</h1><p>${escapeHtml(page.message)}</p>` });
}
