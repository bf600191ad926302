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

  it("creates DATA_DIR so that only the server's user may enter it", () => {
    const dir = join(dataDir(), 'nested', 'data');
    loadConfig({ DATA_DIR: dir });
    expect(statSync(dir).mode & 0o777).toBe(0o700);
  });

  it("takes TRUST_PROXY in every form Express's 'trust proxy' takes, and believes no proxy when it is unset", () => {
    const trust = (value?: string) => loadConfig({ DATA_DIR: dataDir(), TRUST_PROXY: value }).trustProxy;
    expect(trust(undefined)).toBe(false);
    expect(trust('')).toBe(false);
    expect(trust('false')).toBe(false);
    expect(trust('true')).toBe(true);
    expect(trust('2')).toBe(2);
    expect(trust('loopback')).toEqual(['loopback']);
    expect(trust('loopback, 10.0.0.0/8, fd00::/8, 192.168.1.1, 172.16.0.0/255.240.0.0, uniquelocal')).toEqual([
      'loopback',
      '10.0.0.0/8',
      'fd00::/8',
      '192.168.1.1',
      '172.16.0.0/255.240.0.0',
      'uniquelocal',
    ]);
    for (const bad of ['yes-please', '10.0.0.0/33', '10.0.0.0/255.0.255.0', 'fd00::/129', '10.0.0.300', 'loopback,,10.0.0.1']) {
      expect(() => trust(bad), bad).toThrow(ConfigError);
      expect(() => trust(bad), bad).toThrow(/TRUST_PROXY=.* is not valid .*give true, false, a number of hops, or a comma-separated list/);
    }
  });

  it('limits by user and by address; the address limit follows the user limit unless given, and 0 turns both off', () => {
    const limits = (env: Record<string, string>) => {
      const config = loadConfig({ DATA_DIR: dataDir(), ...env });
      return { user: config.rateLimit, address: config.addressRateLimit };
    };
    expect(limits({})).toEqual({ user: { perSecond: 100, burst: 300 }, address: { perSecond: 100, burst: 300 } });
    expect(limits({ RATE_LIMIT_PER_SECOND: '0' })).toMatchObject({ user: { perSecond: 0 }, address: { perSecond: 0 } });
    expect(limits({ RATE_LIMIT_IP_PER_SECOND: '200', RATE_LIMIT_IP_BURST: '1000' })).toEqual({ user: { perSecond: 100, burst: 300 }, address: { perSecond: 200, burst: 1000 } });
    expect(() => limits({ RATE_LIMIT_IP_PER_SECOND: '500' })).toThrow(/RATE_LIMIT_IP_BURST=300 is below RATE_LIMIT_IP_PER_SECOND=500/);
  });
});
