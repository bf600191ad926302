/**
 * What is done by mail (extension): password resets and email
 * verifications. The real servers of the suite send mail to an SMTP server
 * on loopback; the suite reads none, and uses links made for its account
 * by the global setup, as the mails would carry them.
 */
import { describe, expect, it } from 'vitest';
import { mailed, onMock, raw } from './support/context.ts';

const post = (path: string, body: unknown, token: string | null = null) =>
  raw(path, { method: 'POST', token, headers: { 'Content-Type': 'application/json' }, body: JSON.stringify(body) });

describe('mail links (extension)', () => {
  it('requestPasswordReset accepts any address alike, and refuses a malformed one', async () => {
    for (const email of ['contract-mail@example.com', 'nobody-here@example.com']) {
      const accepted = await post('/auth/password-reset', { email });
      expect(accepted.status).toBe(202);
      expect(await accepted.json()).toEqual({});
    }
    expect((await post('/auth/password-reset', { email: 'not an address' })).status).toBe(400);
  });

  it('completePasswordReset sets the password with a reset link, once; refuses a body without the token', async () => {
    expect((await post('/auth/password-reset/complete', { password: 'a contract suite new passphrase' })).status).toBe(400);
    const done = await post('/auth/password-reset/complete', { token: mailed.reset, password: 'a contract suite new passphrase' });
    expect(done.status).toBe(200);
    if (!onMock) {
      const again = await post('/auth/password-reset/complete', { token: mailed.reset, password: 'another contract passphrase' });
      expect(again.status).toBe(400);
      expect((await again.json()).type).toBe('/problems/link-invalid');
    }
  });

  it('sendEmailVerification mails a link to an address not verified yet; refuses a caller without a credential', async () => {
    expect((await raw('/me/email-verification', { method: 'POST', token: mailed.token })).status).toBe(202);
    expect((await raw('/me/email-verification', { method: 'POST', token: null })).status).toBe(401);
  });

  it('verifyEmail verifies the address with a verification link, once; refuses an unknown field', async () => {
    expect((await post('/auth/email-verification', { token: mailed.verify, extra: true })).status).toBe(400);
    expect((await post('/auth/email-verification', { token: mailed.verify })).status).toBe(200);
    if (!onMock) expect((await post('/auth/email-verification', { token: mailed.verify })).status).toBe(400);
  });
});
