/**
 * The HTML of the studio's pages: /, /projects/{projectid}, /links,
 * /links/{playerid}, /inbox, /settings and /admin. One shell for all of them; the
 * bundled app (web/studio/) reads the path and draws the page through the
 * API. Nothing of the request is written into the HTML: the paths' ids
 * reach the app through the address bar alone.
 */
import { assetHref } from './page-assets.ts';

export function renderStudio({ basePath }: { basePath: string }): string {
  return `<!doctype html>
<html lang="en">
  <head>
    <meta charset="utf-8">
    <meta name="viewport" content="width=device-width, initial-scale=1">
    <meta name="robots" content="noindex">
    <title>Audio Share</title>
    <link rel="icon" href="${basePath}/favicon.ico" sizes="any">
    <link rel="icon" href="${assetHref(basePath, 'icon.svg')}" type="image/svg+xml">
    <link rel="stylesheet" href="${assetHref(basePath, 'studio.css')}">
    <script type="module" src="${assetHref(basePath, 'studio.js')}"></script>
  </head>
  <body class="signed-in">
    <div id="studio" data-state="loading" data-api-base="${basePath}/api/v1" data-base-path="${basePath}"></div>
    <noscript><p>The studio is an app: it needs JavaScript.</p></noscript>
  </body>
</html>
`;
}
