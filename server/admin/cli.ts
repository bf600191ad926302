/**
 * The admin CLI: `npm run --silent admin -- <command>`.
 *
 *   token create --email E [--label L]   create the user if needed; print a new token, alone, on stdout
 *   token list [--email E]               list tokens (never their secrets)
 *   token revoke ID                      revoke a token
 *   user reset-link --email E            print a password reset link for the account (valid an hour, works once)
 *
 * It opens the same store as the server (DATA_DIR or DATABASE_URL), and works
 * while the server runs: SQLite is in WAL mode with a busy timeout. It says on
 * stderr which database it used (the SQLite file, or the PostgreSQL URL
 * without its password), so that a token minted in the wrong place is seen at
 * once; stdout stays the bare token, for `TOKEN=$(npm run --silent admin -- …)`.
 */
import { parseArgs } from 'node:util';
import { type Config, ConfigError, loadConfig } from '../config.ts';
import { openStore } from '../repositories.ts';
import { describeDatabase } from './admin-command.ts';
import { createResetLink, RESET_LINK_TTL_MS } from '../resources/mail-links/mail-links-service.ts';
import { systemClock } from '../lib/clock.ts';

const usage = `Usage:
  npm run --silent admin -- token create --email you@example.com [--label "laptop"]
  npm run --silent admin -- token list [--email you@example.com]
  npm run --silent admin -- token revoke <token id>
  npm run --silent admin -- user reset-link --email you@example.com`;

const parseCommandLine = (argv: string[]) => parseArgs({ args: argv, allowPositionals: true, options: { email: { type: 'string' }, label: { type: 'string' } } });

export async function runAdmin(argv: string[], env: NodeJS.ProcessEnv = process.env): Promise<{ code: number; stdout: string; stderr: string }> {
  let parsed: ReturnType<typeof parseCommandLine>;
  try {
    parsed = parseCommandLine(argv);
  } catch (error) {
    return { code: 2, stdout: '', stderr: `${(error as Error).message}\n${usage}\n` };
  }
  const [group, command, ...rest] = parsed.positionals;
  const { email, label } = parsed.values;
  if (group === 'user' && command === 'reset-link') return resetLink(email, env);
  if (group !== 'token' || !['create', 'list', 'revoke'].includes(command ?? '')) return { code: 2, stdout: '', stderr: `${usage}\n` };
  if (command === 'create' && !email) return { code: 2, stdout: '', stderr: `token create needs --email.\n${usage}\n` };
  if (command === 'create' && !/^[^\s@]+@[^\s@]+$/.test(email ?? '')) return { code: 2, stdout: '', stderr: `"${email}" is not an email address.\n` };
  if (command === 'revoke' && rest.length !== 1) return { code: 2, stdout: '', stderr: `token revoke needs one token id (see token list).\n${usage}\n` };

  let config: Config;
  try {
    config = loadConfig({ ...env, LOG_LEVEL: 'silent' });
  } catch (error) {
    if (error instanceof ConfigError) return { code: 2, stdout: '', stderr: `${error.message}\n` };
    throw error;
  }
  const database = describeDatabase(config);
  const store = await openStore({ databaseUrl: config.databaseUrl, dataDir: config.dataDir });
  try {
    const now = Date.now();
    if (command === 'create' && email) {
      const user = await store.users.findOrCreate(email, now);
      const token = await store.tokens.create(user.id, label ?? null, now);
      return { code: 0, stdout: `${token.secret}\n`, stderr: `Created a token for ${user.email} in ${database}.\n` };
    }
    if (command === 'list') {
      const tokens = await store.tokens.list(email);
      const lines = tokens.map((token) =>
        [token.id, token.email, new Date(token.timeCreated).toISOString(), token.timeRevoked ? `revoked ${new Date(token.timeRevoked).toISOString()}` : 'active', token.label ?? ''].join('\t'),
      );
      return { code: 0, stdout: lines.map((line) => `${line}\n`).join(''), stderr: lines.length ? `Tokens in ${database}.\n` : `No tokens in ${database}.\n` };
    }
    const revoked = await store.tokens.revoke(rest[0], now);
    return revoked
      ? { code: 0, stdout: '', stderr: `Revoked ${rest[0]} in ${database}.\n` }
      : { code: 1, stdout: '', stderr: `There is no active token ${rest[0]} in ${database}.\n` };
  } finally {
    await store.close();
  }
}

/**
 * A password reset link, for an account whose person cannot get one by mail
 * (a server without SMTP_URL, or mail that does not arrive): the operator
 * hands it to them. It works as a mailed one does: once, for an hour, and
 * using it ends every session of the account.
 */
async function resetLink(email: string | undefined, env: NodeJS.ProcessEnv): Promise<{ code: number; stdout: string; stderr: string }> {
  if (!email) return { code: 2, stdout: '', stderr: `user reset-link needs --email.\n${usage}\n` };
  let config: Config;
  try {
    config = loadConfig({ ...env, LOG_LEVEL: 'silent' });
  } catch (error) {
    if (error instanceof ConfigError) return { code: 2, stdout: '', stderr: `${error.message}\n` };
    throw error;
  }
  const database = describeDatabase(config);
  const store = await openStore({ databaseUrl: config.databaseUrl, dataDir: config.dataDir });
  try {
    const link = await createResetLink({ store, clock: systemClock, config }, email);
    if (!link) return { code: 1, stdout: '', stderr: `No account has the email ${email} in ${database}.\n` };
    return {
      code: 0,
      stdout: `${link.url}\n`,
      stderr: `A password reset link for ${link.email} in ${database}: it works once, for ${RESET_LINK_TTL_MS / 60_000} minutes, and ends every session of the account. Give it to them only.\n`,
    };
  } finally {
    await store.close();
  }
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const result = await runAdmin(process.argv.slice(2));
  process.stdout.write(result.stdout);
  process.stderr.write(result.stderr);
  process.exit(result.code);
}
