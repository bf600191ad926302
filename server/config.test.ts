import { mkdtempSync, readFileSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from './config.ts';

const dataDir = () => mkdtempSync(join(tmpdir(), 'config-'));

describe('configuration', () => {
  it('needs nothing: defaults to port 8080, SQLite in DATA_DIR, and a generated signing secret kept there', () => {
    const dir = dataDir();
    const config = loadConfig({ DATA_DIR: dir });
    expect(config).toMatchObject({ port: 8080, databaseUrl: undefined, publicUrl: 'http://localhost:8080', maxUploadBytes: 5 * 1024 ** 3 });
    const file = join(dir, 'secrets.json');
    expect(statSync(file).mode & 0o777).toBe(0o600);
    expect(loadConfig({ DATA_DIR: dir }).signingSecret.equals(config.signingSecret)).toBe(true);
    expect(JSON.parse(readFileSync(file, 'utf8')).signingSecret).toBe(config.signingSecret.toString());
  });

  it('names every bad value and what it accepts', () => {
    const bad = () => loadConfig({ DATA_DIR: dataDir(), PORT: 'eighty', DATABASE_URL: 'mysql://x', PUBLIC_URL: 'ftp://x', VALIDATE_RESPONSES: 'maybe', UPLOAD_URL_TTL_SECONDS: '9999999' });
    expect(bad).toThrow(ConfigError);
    try {
      bad();
    } catch (error) {
      const message = (error as Error).message;
      for (const expected of ['PORT=eighty', 'DATABASE_URL must be a PostgreSQL URL', 'PUBLIC_URL=ftp://x', 'VALIDATE_RESPONSES=maybe', 'UPLOAD_URL_TTL_SECONDS=9999999 is not valid: give a whole number from 1 to 604800']) {
        expect(message).toContain(expected);
      }
    }
    expect(() => loadConfig({ DATA_DIR: dataDir(), SIGNING_SECRET: 'short' })).toThrow(/at least 32 characters/);
  });
});
