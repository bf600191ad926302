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

  describe('single sign-on', () => {
    const oidc = { OIDC_ISSUER: 'https://auth.example.org/realms/main', OIDC_CLIENT_ID: 'audio-share', OIDC_CLIENT_SECRET: 'a-client-secret-never-printed', OIDC_NAME: 'Authentik' };
    const problems = (env: Record<string, string>) => {
      try {
        loadConfig({ DATA_DIR: dataDir(), ...env });
      } catch (error) {
        expect(error).toBeInstanceOf(ConfigError);
        return (error as Error).message;
      }
      throw new Error('the configuration was accepted');
    };

    it('is off unless configured, and takes the four settings together', () => {
      expect(loadConfig({ DATA_DIR: dataDir() }).oidc).toBeUndefined();
      expect(loadConfig({ DATA_DIR: dataDir(), ...oidc }).oidc).toEqual({ issuer: 'https://auth.example.org/realms/main', clientId: 'audio-share', clientSecret: 'a-client-secret-never-printed', name: 'Authentik', insecure: false });
    });

    it('takes all four or none, and names what is missing without printing the secret', () => {
      const message = problems({ OIDC_ISSUER: oidc.OIDC_ISSUER, OIDC_CLIENT_SECRET: oidc.OIDC_CLIENT_SECRET });
      expect(message).toContain('OIDC_ISSUER, OIDC_CLIENT_SECRET are set, but OIDC_CLIENT_ID, OIDC_NAME are missing: single sign-on needs all four');
      expect(message).not.toContain('a-client-secret-never-printed');
      expect(problems({ OIDC_NAME: 'Google' })).toContain('OIDC_NAME is set, but OIDC_ISSUER, OIDC_CLIENT_ID, OIDC_CLIENT_SECRET are missing');
    });

    it('refuses an http:// issuer unless its host is loopback', () => {
      for (const issuer of ['http://auth.example.org', 'http://10.0.0.5:9000/application/o/audio/', 'http://[fe80::1]/', 'http://128.0.0.1/', 'http://localhost.example.org/']) {
        expect(problems({ ...oidc, OIDC_ISSUER: issuer }), issuer).toContain(`OIDC_ISSUER=${issuer} is not valid: an http:// issuer is accepted only on a loopback host`);
      }
      for (const issuer of ['http://127.0.0.1:9000', 'http://127.45.0.3/realms/test', 'http://[::1]:8443/', 'http://localhost:3000/']) {
        expect(loadConfig({ DATA_DIR: dataDir(), ...oidc, OIDC_ISSUER: issuer }).oidc, issuer).toMatchObject({ issuer, insecure: true });
      }
    });

    it('names a bad issuer or name and what it accepts', () => {
      for (const issuer of ['auth.example.org', 'ftp://auth.example.org', 'https://auth.example.org/?realm=main', 'https://auth.example.org/#main', 'https://admin:pw@auth.example.org']) {
        expect(problems({ ...oidc, OIDC_ISSUER: issuer }), issuer).toContain(`OIDC_ISSUER=${issuer} is not valid: give the provider's issuer URL`);
      }
      expect(problems({ ...oidc, OIDC_NAME: 'x'.repeat(61) })).toContain('is not valid: give the provider\'s name as people know it (up to 60 characters)');
      expect(problems({ ...oidc, OIDC_NAME: 'Auth\nentik' })).toContain('OIDC_NAME=Auth');
    });
  });

  describe('the blob store', () => {
    const s3 = { BLOB_STORE: 's3', S3_BUCKET: 'audio-files', S3_ACCESS_KEY_ID: 'AKID', S3_SECRET_ACCESS_KEY: 'a-secret-never-printed' };
    const problems = (env: Record<string, string>) => {
      try {
        loadConfig({ DATA_DIR: dataDir(), ...env });
      } catch (error) {
        expect(error).toBeInstanceOf(ConfigError);
        return (error as Error).message;
      }
      throw new Error('the configuration was accepted');
    };

    it('keeps files on disk unless told otherwise', () => {
      expect(loadConfig({ DATA_DIR: dataDir() })).toMatchObject({ blobStore: 'disk', s3: undefined });
      expect(loadConfig({ DATA_DIR: dataDir(), BLOB_STORE: 'disk' })).toMatchObject({ blobStore: 'disk', s3: undefined });
    });

    it('takes a bucket at any S3 endpoint, addressed by path unless told otherwise', () => {
      const config = loadConfig({ DATA_DIR: dataDir(), ...s3, S3_ENDPOINT: 'http://127.0.0.1:7480/', S3_REGION: 'eu-central-1' });
      expect(config.blobStore).toBe('s3');
      expect(config.s3).toEqual({
        endpoint: 'http://127.0.0.1:7480',
        bucket: 'audio-files',
        region: 'eu-central-1',
        accessKeyId: 'AKID',
        secretAccessKey: 'a-secret-never-printed',
        forcePathStyle: true,
      });
      expect(loadConfig({ DATA_DIR: dataDir(), ...s3, S3_ENDPOINT: 'https://account.r2.cloudflarestorage.com', S3_FORCE_PATH_STYLE: 'false' }).s3?.forcePathStyle).toBe(false);
    });

    it('takes AWS S3 itself when no endpoint is given: the region names it, and buckets are addressed by host name', () => {
      expect(loadConfig({ DATA_DIR: dataDir(), ...s3 }).s3).toMatchObject({ endpoint: undefined, region: 'us-east-1', forcePathStyle: false });
    });

    it('names every missing or bad S3 setting and what it accepts, and never prints the secret', () => {
      expect(problems({ BLOB_STORE: 'gcs' })).toContain('BLOB_STORE=gcs is not valid: give disk (files under DATA_DIR/blobs) or s3');
      const missing = problems({ BLOB_STORE: 's3' });
      expect(missing).toContain('S3_BUCKET is missing: BLOB_STORE=s3 needs the name of the bucket');
      expect(missing).toContain('S3_ACCESS_KEY_ID and S3_SECRET_ACCESS_KEY are missing');
      expect(problems({ ...s3, S3_SECRET_ACCESS_KEY: '' })).toContain('S3_SECRET_ACCESS_KEY is missing');
      const bad = problems({ ...s3, S3_BUCKET: 'Audio_Files', S3_ENDPOINT: 'ftp://s3.example.org', S3_REGION: 'EU Central', S3_FORCE_PATH_STYLE: 'sometimes' });
      for (const expected of [
        'S3_BUCKET=Audio_Files is not a valid bucket name: give 3 to 63 lowercase letters, digits, dots and hyphens',
        'S3_ENDPOINT=ftp://s3.example.org is not valid: give the http(s) URL of the S3 API',
        'S3_REGION=EU Central is not valid',
        'S3_FORCE_PATH_STYLE=sometimes is not valid: give true or false',
      ]) {
        expect(bad).toContain(expected);
      }
      expect(bad).not.toContain('a-secret-never-printed');
      for (const name of ['ab', 'a'.repeat(64), '-audio', 'audio..files', '192.168.1.10']) expect(problems({ ...s3, S3_BUCKET: name })).toContain('is not a valid bucket name');
      expect(problems({ ...s3, S3_ENDPOINT: 'http://user:pass@s3.example.org' })).toContain('is not valid: give the http(s) URL of the S3 API, without a query or credentials');
    });

    it('refuses S3 settings while files would go to disk, so that a forgotten BLOB_STORE does not quietly keep them there', () => {
      expect(problems({ S3_BUCKET: 'audio-files' })).toContain('S3_BUCKET is set, but BLOB_STORE is disk: set BLOB_STORE=s3 to keep files in the bucket, or unset it.');
      expect(problems({ BLOB_STORE: 'disk', S3_ENDPOINT: 'http://127.0.0.1:7480', S3_BUCKET: 'audio-files' })).toContain('S3_ENDPOINT, S3_BUCKET are set, but BLOB_STORE is disk');
    });
  });
  describe('mail', () => {
    const problems = (env: Record<string, string>) => {
      try {
        loadConfig({ DATA_DIR: dataDir(), ...env });
      } catch (error) {
        expect(error).toBeInstanceOf(ConfigError);
        return (error as Error).message;
      }
      throw new Error('the configuration was accepted');
    };

    it('sends no mail unless SMTP_URL is set', () => {
      expect(loadConfig({ DATA_DIR: dataDir() }).mail).toBeUndefined();
    });

    it('takes smtp:// and smtps:// with percent-encoded credentials, and requires STARTTLS to send a password anywhere but loopback', () => {
      const from = 'Audio Share <audio@example.org>';
      expect(loadConfig({ DATA_DIR: dataDir(), SMTP_URL: 'smtp://me%40example.org:p%40ss%3Aw0rd@mail.example.org', MAIL_FROM: from }).mail).toEqual({
        host: 'mail.example.org',
        port: 587,
        secure: false,
        requireTls: true,
        user: 'me@example.org',
        password: 'p@ss:w0rd',
        from,
      });
      expect(loadConfig({ DATA_DIR: dataDir(), SMTP_URL: 'smtps://me:secret@mail.example.org', MAIL_FROM: 'audio@example.org' }).mail).toMatchObject({ port: 465, secure: true, requireTls: false });
      expect(loadConfig({ DATA_DIR: dataDir(), SMTP_URL: 'smtp://me:secret@127.0.0.1:2525', MAIL_FROM: 'audio@example.org' }).mail).toMatchObject({ port: 2525, requireTls: false });
      // A relay that takes mail without a password (a local postfix, a mail catcher): STARTTLS when offered.
      expect(loadConfig({ DATA_DIR: dataDir(), SMTP_URL: 'smtp://relay.internal:25', MAIL_FROM: 'audio@example.org' }).mail).toMatchObject({ user: undefined, requireTls: false });
      expect(loadConfig({ DATA_DIR: dataDir(), SMTP_URL: 'smtp://[::1]:25', MAIL_FROM: 'audio@example.org' }).mail).toMatchObject({ host: '::1' });
    });

    it('names a bad SMTP_URL or MAIL_FROM and what it accepts, and never prints the password', () => {
      const good = { SMTP_URL: 'smtp://me:a-secret-never-printed@mail.example.org', MAIL_FROM: 'audio@example.org' };
      for (const [env, expected] of [
        [{ ...good, SMTP_URL: 'http://me:a-secret-never-printed@mail.example.org' }, 'SMTP_URL=http://me:***@mail.example.org is not valid: give smtp://user:password@host:port'],
        [{ ...good, SMTP_URL: 'mail.example.org' }, 'SMTP_URL=mail.example.org is not a URL'],
        [{ ...good, SMTP_URL: 'smtp://me:a-secret-never-printed@mail.example.org/?pool=true' }, 'SMTP_URL=smtp://me:***@mail.example.org/?pool=true has a path or a query'],
        [{ ...good, SMTP_URL: 'smtp://:a-secret-never-printed@mail.example.org' }, 'has a password but no user'],
        [{ ...good, MAIL_FROM: '' }, 'SMTP_URL is set but MAIL_FROM is missing'],
        [{ ...good, MAIL_FROM: 'not an address' }, 'MAIL_FROM=not an address is not valid: give one address'],
        [{ ...good, MAIL_FROM: 'a@example.org, b@example.org' }, 'is not valid: give one address'],
        [{ ...good, MAIL_FROM: 'a@example.org\r\nBcc: everyone@example.org' }, 'is not valid: give one address'],
        [{ MAIL_FROM: 'audio@example.org' }, 'MAIL_FROM is set, but SMTP_URL is not'],
      ] as const) {
        const message = problems(env);
        expect(message, JSON.stringify(env)).toContain(expected);
        expect(message).not.toContain('a-secret-never-printed');
      }
    });
  });
});
