/**
 * The HTML of /u/{playerid}, the upload portal's page: the owner's header
 * and greeting, as text (escaped: the owner typed them, and the page is
 * open to anyone), the form the bundled app (web/portal/) drives, and where
 * to go when every file is in. A closed portal gets a page that says so,
 * with no form.
 */
import { escapeHtml } from '../lib/html.ts';
import { assetHref } from './page-assets.ts';


export interface PortalPage {
  basePath: string;
  playerId: string;
  /** The portal's options when it is open; undefined renders the closed page. */
  open?: { header?: string; greeting?: string; redirect?: string };
  /** Whose portal it is: the player's name, and its owner's display name (never their email) when they set one. */
  recipient?: { playerName: string; ownerName?: string | null };
  /** Why it is closed: gone for good (expired) or not there. */
  closedReason?: string;
}

function page(basePath: string, title: string, body: string, withApp: boolean): string {
  return `<!doctype html>
<html lang="en">
  <head>
    <meta charset="utf-8">
    <meta name="viewport" content="width=device-width, initial-scale=1">
    <meta name="robots" content="noindex">
    <title>${escapeHtml(title)}</title>
    <link rel="icon" href="${basePath}/favicon.ico" sizes="any">
    <link rel="icon" href="${assetHref(basePath, 'icon.svg')}" type="image/svg+xml">
    <link rel="stylesheet" href="${assetHref(basePath, 'portal.css')}">
${withApp ? `    <script type="module" src="${assetHref(basePath, 'portal.js')}"></script>\n` : ''}  </head>
  <body>
${body}
  </body>
</html>
`;
}

export function renderPortal({ basePath, playerId, open, recipient, closedReason }: PortalPage): string {
  if (!open) {
    return page(
      basePath,
      'Upload portal closed',
      `    <main id="portal" class="closed" data-state="closed">
      <h1>This upload portal is closed</h1>
      <p>${escapeHtml(closedReason ?? 'Its link is wrong, or its owner turned it off. Ask them for a new link.')}</p>
    </main>`,
      false,
    );
  }
  const header = open.header?.trim() || 'Send files';
  const endpoint = `${basePath}/api/v1/portal/${encodeURIComponent(playerId)}/tus`;
  return page(
    basePath,
    header,
    `    <main id="portal" data-state="loading" data-endpoint="${escapeHtml(endpoint)}"${open.redirect ? ` data-redirect="${escapeHtml(open.redirect)}"` : ''}>
      <h1>${escapeHtml(header)}</h1>
${recipient ? `      <p class="recipient">${recipientLine(recipient)}</p>\n` : ''}${open.greeting ? `      <p class="greeting">${escapeHtml(open.greeting)}</p>\n` : ''}      <form id="portal-form" novalidate>
        <label for="uploader-name">Your name</label>
        <input id="uploader-name" name="name" type="text" required maxlength="200" autocomplete="name">
        <label for="uploader-email">Your email</label>
        <input id="uploader-email" name="email" type="email" maxlength="320" autocomplete="email">
        <div id="drop" class="drop">
          <p>Drop your files here, or choose them:</p>
          <input id="files" type="file" multiple aria-label="Choose files">
        </div>
        <p id="form-error" role="alert"></p>
        <button id="upload-button" type="submit">Upload</button>
      </form>
      <ul id="file-list" aria-label="Files to upload"></ul>
      <section id="thanks" hidden>
        <h2 tabindex="-1">Thank you</h2>
        <p>Your files are in. You can close this page.</p>
      </section>
      <noscript><p>This page needs JavaScript to send files.</p></noscript>
    </main>`,
    true,
  );
}

/** Whose portal this is, so that a stranger knows where their files go before sending them. */
function recipientLine({ playerName, ownerName }: NonNullable<PortalPage['recipient']>): string {
  const owner = ownerName?.trim() ? escapeHtml(ownerName.trim()) : 'its owner';
  return `Files sent here go to ${owner}, for “${escapeHtml(playerName)}”. Only they see them.`;
}
