/**
 * Starts the target the contract suite runs against and hands its address
 * to the tests. CONTRACT_TARGET picks it:
 *   mock      the partner mock (mock/, Prism behind the server's front), in this
 *             process, at http://127.0.0.1:4010/api/v1 (the default)
 *   sqlite    the real server, in this process, on a fresh SQLite file, with
 *             its files on local disk: the embedded default
 *   postgres  the real server, in this process, on a fresh PostgreSQL database,
 *             with its files in a fresh bucket of an S3 store (radosgw on
 *             loopback, started if none runs, or TEST_S3_ENDPOINT's): the
 *             engines of a deployment that outgrew one machine
 *   sandbox   the real server in sandbox mode (npm run sandbox), in this
 *             process: the token is one it has never seen, so its account,
 *             with the demo project, is made on the suite's first call
 * The real server runs with response validation on, so a response that
 * breaks the spec fails the test that caused it.
 * CONTRACT_BASE_URL (with CONTRACT_TOKEN) points the suite at a server that
 * is already running instead.
 *
 * The real servers take payments from a fake Stripe on loopback
 * (server/testing/fake-stripe.ts) whose accounts can charge at once, and
 * the tests get its webhook signing secret (`stripeWebhookSecret`) to sign
 * the events they send.
 *
 * Every call is recorded (see coverage.ts), so that the run can be checked
 * for covering every operation afterwards.
 */
import type { TestProject } from 'vitest/node';
import { resetCoverage } from './coverage.ts';
import { startContractMock } from './mock.ts';
import { startTestServer } from '../../server/testing/test-server.ts';
import { openRunS3 } from '../../server/testing/s3-run.ts';
import { FakeStripe } from '../../server/testing/fake-stripe.ts';
import { validatingFetch } from './validating-fetch.ts';
import { createSetupLink } from '../../server/resources/account/setup-link.ts';
import type { TestServer } from '../../server/testing/test-server.ts';
import { startSmtpSink } from '../../server/testing/smtp-sink.ts';
import { hashPassword } from '../../server/auth/passwords.ts';

/** The account the session tests sign in to: on a real server, the first account, made through the setup link. */
export const ACCOUNT = { name: 'Contract Admin', email: 'contract-admin@example.com', password: 'contract suite passphrase 2026' };

/**
 * On a real server: the first account, made as a person would (the setup
 * link the server prints, then createFirstAccount, recorded for coverage),
 * and an invitation for the sign-up test.
 */
async function accountsOf(server: TestServer, coverageFile: string): Promise<{ invite: string; passkeyInvite: string }> {
  const link = new URL((await createSetupLink(server.ctx))!);
  const origin = new URL(server.apiUrl).origin;
  const made = await validatingFetch(server.apiUrl, coverageFile)(`${server.apiUrl}/auth/setup`, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json', Origin: origin },
    body: JSON.stringify({ token: link.searchParams.get('token'), ...ACCOUNT }),
  });
  if (made.status !== 200) throw new Error(`createFirstAccount answered ${made.status}: ${await made.text()}`);
  const invitation = await server.ctx.store.oneTimeLinks.create('invitation', { email: 'contract-invited@example.com', ttlMs: 3_600_000 }, server.clock.now());
  // The passkey tests' own account: the session tests end their account's other sessions, which would end theirs.
  const passkeyInvitation = await server.ctx.store.oneTimeLinks.create('invitation', { email: 'contract-passkeys@example.com', ttlMs: 3_600_000 }, server.clock.now());
  return { invite: invitation.secret, passkeyInvite: passkeyInvitation.secret };
}

const STRIPE_WEBHOOK_SECRET = 'whsec_contract_suite_secret';

/** An SMTP server on loopback for a real server of the suite (it mails resets and verifications), and the settings that point the server at it. */
/**
 * The suite's one account invites collaborators in many files, more than the 20 invitation mails an hour an inviter
 * may send by default (and to the same example addresses): the caps are the server tests' business
 * (players/invitation-mail.ts), not the contract's, so they are set out of its way here.
 */
const INVITATION_CAPS = { INVITE_MAILS_PER_INVITER_PER_HOUR: '10000', INVITE_MAILS_PER_RECIPIENT_PER_HOUR: '1000' };

async function mailEnv(): Promise<{ env: Record<string, string>; stop: () => Promise<void> }> {
  const sink = await startSmtpSink();
  return { env: { SMTP_URL: sink.url, MAIL_FROM: 'Contract Suite <contract@example.org>' }, stop: () => sink.close() };
}

/**
 * On a real server: an account whose address is not verified yet, with its
 * token and an email verification link, and a password reset link of
 * another, made as the mails would carry them (the suite reads no mail).
 */
async function mailLinksOf(server: TestServer): Promise<Mailed> {
  const store = server.ctx.store;
  const now = server.clock.now();
  const user = (await store.users.create({ email: 'contract-mail@example.com', name: 'Contract Mail', passwordHash: await hashPassword(ACCOUNT.password), emailVerified: false, isAdmin: false }, now))!;
  // The reset on an account of its own: using it verifies the address, which sendEmailVerification needs unverified.
  const other = (await store.users.create({ email: 'contract-reset@example.com', name: 'Contract Reset', passwordHash: null, emailVerified: false, isAdmin: false }, now))!;
  const reset = await store.oneTimeLinks.create('reset', { userId: other.id, email: other.email, ttlMs: 3_600_000 }, now);
  const verify = await store.oneTimeLinks.create('verify', { userId: user.id, email: user.email, ttlMs: 3_600_000 }, now);
  return { token: (await store.tokens.create(user.id, 'contract mail', now)).secret, reset: reset.secret, verify: verify.secret };
}

/** What the mail tests use: the mock takes anything. */
interface Mailed {
  token: string;
  reset: string;
  verify: string;
}
const MOCK_MAILED: Mailed = { token: 'mock-token', reset: 'mock-reset', verify: 'mock-verify' };

/** A fake Stripe for a real server of the suite, and the settings that point the server at it. */
async function paymentsEnv(): Promise<{ env: Record<string, string>; stop: () => Promise<void> }> {
  const stripe = new FakeStripe({ chargesEnabled: true });
  const base = await stripe.start();
  return { env: { STRIPE_SECRET_KEY: 'sk_test_contract', STRIPE_WEBHOOK_SECRET, STRIPE_API_BASE: base }, stop: () => stripe.stop() };
}

export default async function setup(project: TestProject) {
  const target = process.env.CONTRACT_TARGET ?? 'mock';
  const coverageFile = resetCoverage(target);
  project.provide('coverageFile', coverageFile);
  // The mock takes any password and invitation; a server given by URL names its own (CONTRACT_PASSWORD, CONTRACT_INVITE).
  project.provide('account', { ...ACCOUNT, password: process.env.CONTRACT_PASSWORD ?? ACCOUNT.password, email: process.env.CONTRACT_EMAIL ?? ACCOUNT.email });
  project.provide('invite', process.env.CONTRACT_INVITE ?? 'mock-invitation');
  project.provide('mailed', MOCK_MAILED);
  project.provide('passkeyInvite', process.env.CONTRACT_PASSKEY_INVITE ?? 'mock-invitation');
  project.provide('target', target);
  project.provide('stripeWebhookSecret', STRIPE_WEBHOOK_SECRET);

  let stop = async () => {};
  if (process.env.CONTRACT_BASE_URL) {
    project.provide('baseUrl', process.env.CONTRACT_BASE_URL.replace(/\/$/, ''));
    project.provide('token', process.env.CONTRACT_TOKEN ?? '');
    project.provide('propertiesToken', process.env.CONTRACT_TOKEN ?? '');
    project.provide('workflowsToken', process.env.CONTRACT_TOKEN ?? '');
    project.provide('adminToken', process.env.CONTRACT_ADMIN_TOKEN ?? process.env.CONTRACT_TOKEN ?? '');
  } else if (target === 'mock') {
    const mock = await startContractMock();
    project.provide('baseUrl', mock.apiUrl);
    // The mock checks that a bearer token is present and well-formed, not what it is.
    project.provide('token', 'mock-token');
    project.provide('propertiesToken', 'mock-token');
    project.provide('workflowsToken', 'mock-token');
    project.provide('adminToken', 'mock-token');
    stop = mock.stop;
  } else if (target === 'sqlite' || target === 'postgres') {
    const s3 = target === 'postgres' ? await openRunS3() : undefined;
    const blobStore = s3 ? s3.env(await s3.bucket()) : {};
    const payments = await paymentsEnv();
    const mail = await mailEnv();
    // Audio jobs run in the server, so that uploaded audio reaches `ready` and its peaks can be fetched.
    // Webhooks may reach loopback, as on a self-hosted server: the webhook tests run their receiver there.
    const server = await startTestServer(target, { PROCESSING: 'in-process', JOB_POLL_MS: '50', WEBHOOK_ALLOW_PRIVATE: 'true', ...INVITATION_CAPS, ...blobStore, ...payments.env, ...mail.env });
    project.provide('baseUrl', server.apiUrl);
    const invitations = await accountsOf(server, coverageFile);
    project.provide('invite', invitations.invite);
    project.provide('passkeyInvite', invitations.passkeyInvite);
    project.provide('mailed', await mailLinksOf(server));
    project.provide('token', await server.token('contract@example.com'));
    project.provide('propertiesToken', await server.token('contract-properties@example.com'));
    // The Arazzo workflows' account (workflows.test.ts): their projects and webhooks must not reach the other tests' receivers and lists.
    project.provide('workflowsToken', await server.token('contract-workflows@example.com'));
    // The first account is an administrator.
    project.provide('adminToken', await server.token(ACCOUNT.email));
    stop = async () => {
      await server.stop();
      await s3?.close();
      await payments.stop();
      await mail.stop();
    };
  } else if (target === 'sandbox') {
    const payments = await paymentsEnv();
    const mail = await mailEnv();
    const server = await startTestServer('sqlite', { SANDBOX: 'true', PROCESSING: 'in-process', JOB_POLL_MS: '50', ...INVITATION_CAPS, ...payments.env, ...mail.env });
    project.provide('baseUrl', server.apiUrl);
    const invitations = await accountsOf(server, coverageFile);
    project.provide('invite', invitations.invite);
    project.provide('passkeyInvite', invitations.passkeyInvite);
    project.provide('mailed', await mailLinksOf(server));
    project.provide('token', `contract-partner-${Date.now()}`);
    // A token the sandbox has not seen is an account of its own.
    project.provide('propertiesToken', `contract-properties-${Date.now()}`);
    project.provide('workflowsToken', `contract-workflows-${Date.now()}`);
    // The sandbox's operator made its first account, an administrator, as on any server; partners' accounts are not.
    project.provide('adminToken', await server.token(ACCOUNT.email));
    stop = async () => {
      await server.stop();
      await payments.stop();
      await mail.stop();
    };
  } else {
    throw new Error(`Unknown CONTRACT_TARGET "${target}". Use mock, sqlite, postgres or sandbox, or set CONTRACT_BASE_URL and CONTRACT_TOKEN.`);
  }

  return stop;
}
