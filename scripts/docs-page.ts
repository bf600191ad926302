/**
 * Checks and finishes generated/docs.html, the page `redocly build-docs`
 * makes (scripts/generate.ts calls this on it). The page must make
 * no request to a third party: not its readers' visits reported to Redocly,
 * not a logo from its CDN. Every step checks that the page still has the
 * shape it expects and stops the build when it does not, so that an upgrade
 * of Redocly cannot bring a third-party request back unnoticed.
 */
export function finishDocsPage(html: string, iconSvg: string): string {
  // Telemetry. Redoc's page sends OpenTelemetry traces of its readers' clicks and page views to
  // https://otel.cloud.redocly.com/v1/traces unless its options say `disableTelemetry: true`.
  // build-docs writes that option when Redocly's telemetry is off: `telemetry: off` in
  // redocly.yaml, and REDOCLY_TELEMETRY=off, which scripts/generate.ts sets. Here the built page
  // is read back to make sure the option is there and true.
  const options = [...html.matchAll(/const __redoc_options = (\{.*\});/g)];
  if (options.length !== 1) throw new Error(`generated/docs.html: expected one \`const __redoc_options = {…};\` line, found ${options.length}. Redocly changed its page; check that it still sends no telemetry before adapting scripts/docs-page.ts.`);
  if ((JSON.parse(options[0][1]) as { disableTelemetry?: unknown }).disableTelemetry !== true) {
    throw new Error(`generated/docs.html: Redoc's options are ${options[0][1]}, without disableTelemetry: true, so every reader's browser would report to Redocly. Keep \`telemetry: off\` in redocly.yaml.`);
  }

  // Redoc's "API docs by Redocly" logo comes from its CDN. It becomes an empty image, which
  // Redoc's own onError handler then hides; nothing may be left on cdn.redoc.ly.
  const logo = /https:\/\/cdn\.redoc\.ly\/redoc\/logo-mini(?:-full)?\.svg/g;
  if (html.search(logo) === -1) throw new Error("generated/docs.html: Redoc's logo URL (https://cdn.redoc.ly/redoc/logo-mini*.svg) is not where scripts/docs-page.ts expects it. Find where the page loads its logo from now before adapting the script.");
  html = html.replace(logo, 'data:,');
  if (html.includes('cdn.redoc.ly')) throw new Error('generated/docs.html still refers to cdn.redoc.ly after the logo was removed: a new third-party request to neutralise.');

  // The icon of the player pages, inlined (a data: URL), so that the page asks for none and
  // shows it wherever it is opened from: /docs, a path below PUBLIC_URL's, or the file itself.
  const icon = iconSvg.trim();
  // The template's own </head> is alone on its line (the inlined bundle holds the string too).
  const heads = html.match(/^<\/head>$/gm)?.length ?? 0;
  if (heads !== 1) throw new Error(`generated/docs.html: expected one line that is just </head>, found ${heads}.`);
  return html.replace(/^<\/head>$/m, `  <link rel="icon" type="image/svg+xml" href="data:image/svg+xml,${encodeURIComponent(icon)}">\n</head>`);
}
