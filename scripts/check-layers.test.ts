/**
 * The import rules of scripts/check-layers.ts, each shown to catch its
 * breach on made-up imports, and to let the layout's own imports through.
 */
import { describe, expect, it } from 'vitest';
import { breaches, importsOf, type ImportEdge } from './check-layers.ts';

const value = (from: string, to: string): ImportEdge => ({ from, to, runtime: true });
const typeOnly = (from: string, to: string): ImportEdge => ({ from, to, runtime: false });

describe('the import rules', () => {
  it('refuse a lower layer importing a resource or the composition root, even a type', () => {
    expect(breaches([typeOnly('server/http/auth.ts', 'server/repositories.ts')])).toEqual([expect.stringMatching(/^floors: server\/http\/auth\.ts \(http\) imports server\/repositories\.ts \(root, above it\), a type/)]);
    expect(breaches([value('server/lib/content-sniffing.ts', 'server/resources/uploads/sniff.ts')])).toHaveLength(1);
    expect(breaches([typeOnly('server/audio/processing.ts', 'server/context.ts')])).toHaveLength(1);
    // Ranked floors: auth is below http, signing above auth, pages above the resources; a type counts as a value.
    expect(breaches([typeOnly('server/auth/policy.ts', 'server/http/route.ts')])).toEqual([expect.stringMatching(/^floors: server\/auth\/policy\.ts \(auth\) imports server\/http\/route\.ts \(http, above it\), a type/)]);
    expect(breaches([value('server/resources/oauth/oauth-apps.ts', 'server/pages/page-assets.ts')])).toEqual([expect.stringMatching(/^floors: /)]);
    expect(breaches([value('server/signing/player-grant.ts', 'server/auth/policy.ts'), value('server/http/auth.ts', 'server/lib/problems.ts')])).toEqual([]);
    // The settings any floor names by type; the composition's ports, the resources and above; no value from either.
    expect(breaches([typeOnly('server/http/paging.ts', 'server/config.ts'), typeOnly('server/resources/boxes/boxes-service.ts', 'server/context.ts')])).toEqual([]);
    expect(breaches([value('server/resources/uploads/uploads-service.ts', 'server/context.ts')])).toEqual([expect.stringMatching(/^floors: /)]);
    // Downwards, and a test of a lower layer using the server, are fine.
    expect(breaches([value('server/resources/uploads/uploads-service.ts', 'server/lib/content-sniffing.ts'), value('server/http/http.test.ts', 'server/app.ts')])).toEqual([]);
  });

  it('refuse web/ importing anything outside web/, generated/ and shared/; shared/ importing outside itself; the server importing web/', () => {
    expect(breaches([value('web/page-routes.ts', 'server/context.ts')])).toEqual([expect.stringMatching(/^web: /)]);
    expect(breaches([value('web/player/api.ts', 'generated/client.ts'), value('web/player/main.ts', 'web/player/api.ts'), value('web/account/signed-out.ts', 'shared/next-path.ts')])).toEqual([]);
    expect(breaches([value('shared/next-path.ts', 'web/account/api.ts')])).toEqual([expect.stringMatching(/^shared: /)]);
    expect(breaches([value('server/resources/sso/oidc-routes.ts', 'web/account/next-path.ts')])).toEqual([expect.stringMatching(/^web: server\/resources\/sso\/oidc-routes\.ts imports web\//)]);
    expect(breaches([value('server/resources/sso/oidc-routes.ts', 'shared/next-path.ts'), value('server/http/changelog-page.test.ts', 'web/testing/player-browser.ts')])).toEqual([]);
  });

  it('refuse production code importing test code', () => {
    expect(breaches([value('server/resources/webhooks/webhook-receiver.ts', 'server/testing/until.ts')])).toEqual([expect.stringMatching(/^tests: /)]);
    expect(breaches([value('server/resources/portal/portal.test.ts', 'server/testing/until.ts')])).toEqual([]);
  });

  it('refuse an import cycle among production files, of types too (but through the ports of the composition), not through a worker thread', () => {
    expect(breaches([value('web/player/locked.ts', 'web/player/player-app.ts'), value('web/player/player-app.ts', 'web/player/locked.ts')])).toEqual([
      'cycle: web/player/locked.ts → web/player/player-app.ts → web/player/locked.ts',
    ]);
    expect(breaches([value('server/a.ts', 'server/b.ts'), value('server/b.ts', 'server/c.ts'), value('server/c.ts', 'server/a.ts')])).toEqual([expect.stringMatching(/^cycle: /)]);
    expect(breaches([value('server/a.ts', 'server/b.ts'), typeOnly('server/b.ts', 'server/a.ts')])).toEqual([expect.stringMatching(/^cycle: server\/a\.ts → server\/b\.ts → server\/a\.ts/)]);
    expect(breaches([value('server/context.ts', 'server/repositories.ts'), value('server/repositories.ts', 'server/resources/players/player-repository.ts'), typeOnly('server/resources/players/player-repository.ts', 'server/context.ts')])).toEqual([]);
    expect(breaches([{ ...value('server/audio/waveform.ts', 'server/audio/waveform-thread.ts'), thread: true }, value('server/audio/waveform-thread.ts', 'server/audio/waveform.ts')])).toEqual([]);
  });

  it('refuse two resources that depend on each other, even through types', () => {
    expect(breaches([value('server/resources/listening/view-service.ts', 'server/resources/downloads/signed-downloads.ts'), typeOnly('server/resources/downloads/downloads-handlers.ts', 'server/resources/listening/player-grants.ts')])).toEqual([
      expect.stringMatching(/^resources: listening → downloads → listening/),
    ]);
    expect(breaches([value('server/resources/downloads/downloads-service.ts', 'server/resources/listening/player-grants.ts')])).toEqual([]);
  });

  it('refuse the audio worker loading the HTTP app', () => {
    expect(breaches([value('server/worker-main.ts', 'server/server.ts'), value('server/server.ts', 'server/app.ts')])).toEqual([expect.stringMatching(/^worker: /)]);
  });

  it('refuse a resource module other than a handler, route or tus module naming Express, even by type', () => {
    expect(breaches([typeOnly('server/resources/sessions/session-service.ts', 'express')])).toEqual([
      expect.stringMatching(/^express: server\/resources\/sessions\/session-service\.ts imports 'express', a type; /),
    ]);
    expect(breaches([value('server/resources/listening/listener.ts', 'express')])).toEqual([expect.stringMatching(/^express: /)]);
    // Where requests are read and responses written, and outside the resources (and in tests), it may.
    expect(
      breaches([
        typeOnly('server/resources/listening/listening-handlers.ts', 'express'),
        value('server/resources/mcp/mcp-routes.ts', 'express'),
        value('server/resources/sso/oidc-routes.ts', 'express'),
        typeOnly('server/resources/portal/portal-tus.ts', 'express'),
        typeOnly('server/http/request-facts.ts', 'express'),
        value('server/app.ts', 'express'),
        value('server/resources/sessions/sessions.test.ts', 'express'),
      ]),
    ).toEqual([]);
    // A type named through import('express') counts as an import.
    expect(importsOf('server/resources/x/x-service.ts', "let r: import('express').Request;")).toEqual([typeOnly('server/resources/x/x-service.ts', 'express')]);
  });

  it('read value, type-only, re-exported, dynamic and worker-thread imports from source', () => {
    const source = [
      "import { a } from './a.ts';",
      "import type { B } from './b.ts';",
      "import { type C, type D } from './c.ts';",
      "import { type E, f } from './e.ts';",
      "export { g } from './g.ts';",
      "import express from 'express';",
      "const h = await import('./h.ts');",
      "new Worker(new URL('./thread.ts', import.meta.url));",
    ].join('\n');
    expect(importsOf('server/x.ts', source)).toEqual([
      value('server/x.ts', 'server/a.ts'),
      typeOnly('server/x.ts', 'server/b.ts'),
      typeOnly('server/x.ts', 'server/c.ts'),
      value('server/x.ts', 'server/e.ts'),
      value('server/x.ts', 'server/g.ts'),
      value('server/x.ts', 'express'),
      value('server/x.ts', 'server/h.ts'),
      { ...value('server/x.ts', 'server/thread.ts'), thread: true },
    ]);
  });
});
