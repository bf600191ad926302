/**
 * The admin CLI: `npm run --silent admin -- <command>`.
 *
 *   token create --email E [--label L] [--expires-in 30d]
 *                                        create the user if needed; print a new token (every scope), alone, on stdout
 *   token list [--email E]               list tokens (never their secrets)
 *   token revoke ID                      revoke a token
 *   invite --email E [--admin]           print an invitation link (seven days, once) to make an account
 *   setup-link                           print a new link to make the first account (only while there is none)
 *   user disable|enable|make-admin --email E
 *                                        disable an account (its sessions end, its tokens are refused), enable it,
 *                                        or make it an administrator
 *   user reset-link --email E            print a password reset link for the account (valid an hour, works once)
 *
 * It opens the same store as the server (DATA_DIR or DATABASE_URL), and works
 * while the server runs: SQLite is in WAL mode with a busy timeout. It says on
 * stderr which database it used (the SQLite file, or the PostgreSQL URL
 * without its password), so that a token minted in the wrong place is seen at
 * once; stdout stays the bare token or link, for `TOKEN=$(npm run --silent admin -- …)`.
 */
import { parseArgs } from 'node:util';
import { type Config, ConfigError, loadConfig } from '../config.ts';
import { openStore, type Store } from '../repositories.ts';
import { systemClock } from '../lib/clock.ts';
import { HttpProblem } from '../lib/problems.ts';
import { changeUser, invite } from '../resources/admin/admin-service.ts';
import { createSetupLink } from '../resources/account/setup-link.ts';
import { createResetLink, RESET_LINK_TTL_MS } from '../resources/mail-links/mail-links-service.ts';
import { describeDatabase } from './admin-command.ts';

const usage = `Usage:
  npm run --silent admin -- token create --email you@example.com [--label "laptop"] [--expires-in 30d]
  npm run --silent admin -- token list [--email you@example.com]
  npm run --silent admin -- token revoke <token id>
  npm run --silent admin -- invite --email someone@example.com [--admin]
  npm run --silent admin -- setup-link
  npm run --silent admin -- user disable|enable|make-admin --email someone@example.com
  npm run --silent admin -- user reset-link --email you@example.com`;

const parseCommandLine = (argv: string[]) =>
  parseArgs({
    args: argv,
    allowPositionals: true,
    options: { email: { type: 'string' }, label: { type: 'string' }, 'expires-in': { type: 'string' }, admin: { type: 'boolean' } },
  });

const UNITS: Record<string, number> = { m: 60_000, h: 3_600_000, d: 86_400_000 };

/** `--expires-in`: a whole number of minutes, hours or days (`90m`, `12h`, `30d`); undefined when it is not one. */
export function parseDuration(text: string): number | undefined {
  const match = /^([1-9][0-9]{0,5})([mhd])$/.exec(text);
  return match ? Number(match[1]) * UNITS[match[2]] : undefined;
}

const isEmail = (text: string | undefined) => /^[^\s@]+@[^\s@]+$/.test(text ?? '');

type Result = { code: number; stdout: string; stderr: string };
const misuse = (message: string): Result => ({ code: 2, stdout: '', stderr: `${message}\n${usage}\n` });

/** What is wrong with the command line, or undefined when it can run. */
function misuseOf(positionals: string[], values: ReturnType<typeof parseCommandLine>['values']): Result | undefined {
  const [group, command, ...rest] = positionals;
  const needsEmail = (what: string) => {
    if (!values.email) return misuse(`${what} needs --email.`);
    if (!isEmail(values.email)) return { code: 2, stdout: '', stderr: `"${values.email}" is not an email address.\n` };
    return undefined;
  };
  if (group === 'token') {
    if (!['create', 'list', 'revoke'].includes(command ?? '')) return misuse('');
    if (command === 'create') {
      if (values['expires-in'] !== undefined && parseDuration(values['expires-in']) === undefined) {
        return misuse(`--expires-in takes a whole number of minutes, hours or days, such as 90m, 12h or 30d; got "${values['expires-in']}".`);
      }
      return needsEmail('token create');
    }
    if (command === 'revoke' && rest.length !== 1) return misuse('token revoke needs one token id (see token list).');
    return undefined;
  }
  if (group === 'invite') return command === undefined ? needsEmail('invite') : misuse('');
  if (group === 'setup-link') return command === undefined ? undefined : misuse('');
  if (group === 'user') return ['disable', 'enable', 'make-admin', 'reset-link'].includes(command ?? '') && rest.length === 0 ? needsEmail(`user ${command}`) : misuse('');
  return misuse('');
}

export async function runAdmin(argv: string[], env: NodeJS.ProcessEnv = process.env): Promise<Result> {
  let parsed: ReturnType<typeof parseCommandLine>;
  try {
    parsed = parseCommandLine(argv);
  } catch (error) {
    return misuse((error as Error).message);
  }
  const refused = misuseOf(parsed.positionals, parsed.values);
  if (refused) return { ...refused, stderr: refused.stderr.replace(/^\n/, '') };

  let config: Config;
  try {
    config = loadConfig({ ...env, LOG_LEVEL: 'silent' });
  } catch (error) {
    if (error instanceof ConfigError) return { code: 2, stdout: '', stderr: `${error.message}\n` };
    throw error;
  }
  const store = await openStore({ databaseUrl: config.databaseUrl, dataDir: config.dataDir });
  try {
    return await run(parsed.positionals, parsed.values, { store, config, database: describeDatabase(config) });
  } catch (error) {
    // The services' refusals (an address with an account already, the last administrator) are the operator's to read.
    if (error instanceof HttpProblem) return { code: 1, stdout: '', stderr: `${error.detail}\n` };
    throw error;
  } finally {
    await store.close();
  }
}

async function run(positionals: string[], values: ReturnType<typeof parseCommandLine>['values'], { store, config, database }: { store: Store; config: Config; database: string }): Promise<Result> {
  const [group, command, ...rest] = positionals;
  const now = systemClock.now();
  const { email, label } = values;
  if (group === 'token' && command === 'create' && email) {
    const user = await store.users.findOrCreate(email, now);
    const lasts = values['expires-in'] === undefined ? undefined : parseDuration(values['expires-in'])!;
    // The issue: "Tokens minted by the admin CLI get every scope (with `--expires-in` optional)": scopes null, every one there is.
    const token = await store.tokens.create(user.id, label ?? null, now, { expires: lasts === undefined ? null : now + lasts });
    const until = lasts === undefined ? '' : `, valid until ${new Date(now + lasts).toISOString()}`;
    return { code: 0, stdout: `${token.secret}\n`, stderr: `Created a token for ${user.email} in ${database}${until}.\n` };
  }
  if (group === 'token' && command === 'list') {
    const tokens = await store.tokens.list(email);
    const lines = tokens.map((token) =>
      [token.id, token.email, new Date(token.timeCreated).toISOString(), token.timeRevoked ? `revoked ${new Date(token.timeRevoked).toISOString()}` : 'active', token.label ?? ''].join('\t'),
    );
    return { code: 0, stdout: lines.map((line) => `${line}\n`).join(''), stderr: lines.length ? `Tokens in ${database}.\n` : `No tokens in ${database}.\n` };
  }
  if (group === 'token' && command === 'revoke') {
    const revoked = await store.tokens.revoke(rest[0], now);
    return revoked
      ? { code: 0, stdout: '', stderr: `Revoked ${rest[0]} in ${database}.\n` }
      : { code: 1, stdout: '', stderr: `There is no active token ${rest[0]} in ${database}.\n` };
  }
  if (group === 'invite' && email) {
    const invitation = await invite({ store, clock: systemClock, config }, { email, admin: values.admin ?? false, createdBy: null });
    const as = invitation.admin ? ' as an administrator' : '';
    return {
      code: 0,
      stdout: `${invitation.url}\n`,
      stderr: `Invited ${invitation.email}${as} in ${database}; the link works once, until ${new Date(invitation.expiresAt).toISOString()}.\n`,
    };
  }
  if (group === 'setup-link') {
    const link = await createSetupLink({ store, clock: systemClock, config });
    if (!link) return { code: 1, stdout: '', stderr: `${database} has accounts already; the setup link makes only the first. Use invite --email to add one.\n` };
    return { code: 0, stdout: `${link}\n`, stderr: `Open it to create the first account (an administrator); it works once, and ends the links printed before it.\n` };
  }
  if (group === 'user' && command === 'reset-link' && email) {
    // For an account whose person cannot get one by mail (a server without SMTP_URL, or mail that does not
    // arrive): the operator hands it to them. It works as a mailed one does: once, for an hour, ending every session.
    const link = await createResetLink({ store, clock: systemClock, config }, email);
    if (!link) return { code: 1, stdout: '', stderr: `No account has the email ${email} in ${database}.\n` };
    return {
      code: 0,
      stdout: `${link.url}\n`,
      stderr: `A password reset link for ${link.email} in ${database}: it works once, for ${RESET_LINK_TTL_MS / 60_000} minutes, and ends every session of the account. Give it to them only.\n`,
    };
  }
  if (group === 'user' && email) {
    const user = await store.users.findByEmail(email);
    if (!user) return { code: 1, stdout: '', stderr: `There is no account ${email.trim().toLowerCase()} in ${database}.\n` };
    const change = command === 'disable' ? { disabled: true } : command === 'enable' ? { disabled: false } : { admin: true };
    await changeUser(store, user.id, change);
    const done = command === 'disable' ? 'Disabled' : command === 'enable' ? 'Enabled' : 'Made an administrator:';
    return { code: 0, stdout: '', stderr: `${done} ${user.email} in ${database}.\n` };
  }
  return misuse('');
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const result = await runAdmin(process.argv.slice(2));
  process.stdout.write(result.stdout);
  process.stderr.write(result.stderr);
  process.exit(result.code);
}
