/**
 * The checks the docs build makes on the page Redocly writes: a page that
 * would report to Redocly, or whose logo moved, stops the build.
 */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { docsPath } from '../server/app.ts';
import { finishDocsPage } from './docs-page.ts';

const icon = '<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 1 1"/>';

/** The shape of what `redocly build-docs` writes, with only what finishDocsPage looks at. */
function builtPage({ telemetry = false, logo = true } = {}): string {
  const logoSource = logo ? 'src:e?`https://cdn.redoc.ly/redoc/logo-mini-full.svg`:`https://cdn.redoc.ly/redoc/logo-mini.svg`' : 'src:e';
  return [
    '<!DOCTYPE html>',
    '<html lang="en">',
    '<head>',
    '  <title>Audio Share API</title>',
    '</head>',
    '<body>',
    `  <script type="module">const bundle = "</head>"; ({${logoSource}});`,
    '      const __redoc_definition = {};',
    `      const __redoc_options = ${JSON.stringify({ skipBundle: true, disableTelemetry: !telemetry })};`,
    '  </script>',
    '</body>',
    '</html>',
  ].join('\n');
}

describe('the docs build', () => {
  it("replaces Redoc's CDN logo and links the inlined icon, in the head", () => {
    const page = finishDocsPage(builtPage(), icon);
    expect(page).not.toContain('cdn.redoc.ly');
    expect(page).toContain('src:e?`data:,`:`data:,`');
    expect(page).toContain(`  <link rel="icon" type="image/svg+xml" href="data:image/svg+xml,${encodeURIComponent(icon)}">\n</head>\n<body>`);
    // The bundle's own "</head>" string is left alone.
    expect(page).toContain('const bundle = "</head>"');
  });

  it('stops when the page would send telemetry to Redocly', () => {
    expect(() => finishDocsPage(builtPage({ telemetry: true }), icon)).toThrow(/disableTelemetry: true.*telemetry: off/s);
  });

  it("stops when Redoc's options or its logo are no longer where they were", () => {
    expect(() => finishDocsPage(builtPage().replace('const __redoc_options', 'const options'), icon)).toThrow(/__redoc_options/);
    expect(() => finishDocsPage(builtPage({ logo: false }), icon)).toThrow(/logo URL/);
    expect(() => finishDocsPage(`${builtPage()}<img src="https://cdn.redoc.ly/other.png">`, icon)).toThrow(/still refers to cdn\.redoc\.ly/);
  });

  it('made the committed page: telemetry off, no CDN, the icon linked', () => {
    const page = readFileSync(docsPath, 'utf8');
    expect(page).toContain('"disableTelemetry":true');
    expect(page).not.toContain('cdn.redoc.ly');
    expect(page).toContain('<link rel="icon" type="image/svg+xml" href="data:image/svg+xml,');
  });
});
