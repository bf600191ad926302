/** The HTML of the player pages. Every value from a user is escaped. */
export interface PageTrack {
  id: string;
  name: string;
  subtitle: string;
  mimeType: string;
  /** Signed streaming URLs by quality; the page plays one of them. */
  streams: Partial<Record<'original' | 'compressed' | 'lossless', string>>;
  downloadUrl?: string;
}

const escape = (text: string) => text.replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c]!);

function layout(title: string, body: string, accent = '#3b82f6'): string {
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="referrer" content="no-referrer">
<title>${escape(title)}</title>
<style>
  :root { --accent: ${accent}; }
  body { font: 16px/1.5 system-ui, sans-serif; margin: 0; background: #0f172a; color: #e2e8f0; }
  main { max-width: 760px; margin: 0 auto; padding: 32px 20px; }
  header { display: flex; gap: 20px; align-items: center; margin-bottom: 28px; }
  header img { width: 120px; height: 120px; object-fit: cover; border-radius: 8px; }
  h1 { margin: 0; font-size: 28px; }
  .project { color: #94a3b8; }
  ol { list-style: none; padding: 0; margin: 0; }
  li { background: #1e293b; border-left: 4px solid var(--accent); border-radius: 6px; padding: 12px 16px; margin-bottom: 12px; }
  .track-name { font-weight: 600; }
  .subtitle { color: #94a3b8; font-size: 14px; }
  audio { width: 100%; margin-top: 8px; }
  a { color: var(--accent); }
  form { display: flex; gap: 8px; margin-top: 16px; }
  input { flex: 1; padding: 8px; border-radius: 4px; border: 1px solid #475569; background: #0f172a; color: inherit; }
  button { padding: 8px 16px; border: 0; border-radius: 4px; background: var(--accent); color: white; }
</style>
</head>
<body><main>${body}</main></body>
</html>`;
}

export function renderPlayerPage(page: { name: string; color: string; projectName: string; artwork?: string; tracks: PageTrack[] }): string {
  const tracks = page.tracks
    .map(
      (track) => `<li class="track" data-box-id="${escape(track.id)}">
  <div class="track-name">${escape(track.name)}</div>
  ${track.subtitle ? `<div class="subtitle">${escape(track.subtitle)}</div>` : ''}
  <audio controls preload="metadata"${Object.entries(track.streams).map(([quality, url]) => ` data-${quality}="${escape(url!)}"`).join('')}></audio>
  ${track.downloadUrl ? `<a class="download" href="${escape(track.downloadUrl)}" download>Download</a>` : ''}
</li>`,
    )
    .join('\n');
  const artwork = page.artwork ? `<img class="artwork" src="${escape(page.artwork)}" alt="Artwork of ${escape(page.projectName)}">` : '';
  return layout(
    page.name,
    `<header>${artwork}<div><h1>${escape(page.name)}</h1><div class="project">${escape(page.projectName)}</div></div></header>
<ol class="tracks">${tracks || '<li class="empty">No tracks yet.</li>'}</ol>
<script>${chooseQuality}</script>`,
    page.color,
  );
}

/**
 * Picks each track's stream: the only one offered when the player sets a
 * quality; otherwise the best the connection carries (the Network
 * Information API's downlink, in Mbit/s, where the browser has it): lossless
 * or the original from 10 Mbit/s, the compressed rendition below that.
 */
const chooseQuality = `
for (const audio of document.querySelectorAll('audio')) {
  const offered = audio.dataset;
  const fast = (navigator.connection?.downlink ?? 10) >= 10;
  const order = fast ? ['lossless', 'original', 'compressed'] : ['compressed', 'original', 'lossless'];
  const quality = order.find((name) => offered[name]);
  audio.dataset.quality = quality;
  audio.src = offered[quality];
}`;

export function renderSignInPage(name: string, playerId: string, rejected: boolean): string {
  return layout(
    name,
    `<h1>${escape(name)}</h1>
<p>This player is for invited collaborators only. Sign in with your access token.</p>
${rejected ? '<p class="error">That token does not give access to this player.</p>' : ''}
<form method="post" action="/p/${encodeURIComponent(playerId)}/session">
  <input name="token" type="password" autocomplete="off" placeholder="Access token" aria-label="Access token" required>
  <button type="submit">Open</button>
</form>`,
  );
}

export function renderMessagePage(title: string, message: string): string {
  return layout(title, `<h1>${escape(title)}</h1><p>${escape(message)}</p>`);
}
