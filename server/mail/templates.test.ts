import { describe, expect, it } from 'vitest';
import { escapeHtml } from '../lib/html.ts';
import { collaboratorInvitationMail, invitationMail, notificationDigestMail, notificationMail, oneLine, passwordResetMail, verifyEmailMail } from './templates.ts';

const url = 'https://audio.example.org/signup?invite=abc&x=<1>';

describe('mail templates', () => {
  it('escape every value in the HTML, link included, and keep the text as written', () => {
    const mail = collaboratorInvitationMail({ to: 'client@label.com', invitedBy: 'Mallory <script>alert(1)</script>', playerName: 'Mix "final" & <b>loud</b>', role: 'reviewer', url });
    expect(mail.html).not.toContain('<script>');
    expect(mail.html).not.toContain('<b>loud</b>');
    expect(mail.html).toContain('Mallory &lt;script&gt;alert(1)&lt;/script&gt;');
    expect(mail.html).toContain('Mix &quot;final&quot; &amp; &lt;b&gt;loud&lt;/b&gt;');
    expect(mail.html).toContain('href="https://audio.example.org/signup?invite=abc&amp;x=%3C1%3E"');
    expect(mail.text).toContain('Mix "final" & <b>loud</b>');
    expect(mail.text).toContain('Open the invitation: https://audio.example.org/signup?invite=abc&x=%3C1%3E');
    // The subject is the server's: the inviter's words are only in the body.
    expect(mail.subject).toBe('An invitation to a player on Audio Share');
    expect(mail.text).toContain('Mallory <script>alert(1)</script> shared the player “Mix "final" & <b>loud</b>” with you on Audio Share');
    expect(mail.to).toBe('client@label.com');
  });

  it('make a name one short line, so that it cannot add paragraphs or links of its own', () => {
    expect(oneLine('Ada\r\n\r\nClick https://evil.example\u2028now\u0000')).toBe('Ada Click https://evil.example now');
    expect(oneLine('x'.repeat(200))).toHaveLength(80);
    const mail = verifyEmailMail({ to: 'ada@example.com', name: 'Ada\n\nYour account is locked', url: 'https://a.example/verify-email?token=t', validForMs: 2 * 86_400_000 });
    expect(mail.text.split('\n\n')[0]).toBe('Hello Ada Your account is locked,');
    expect(mail.text).toContain('for 2 days');
  });

  it('never fill a slot from a value: a name with {1} in it stays as written', () => {
    const mail = invitationMail({ to: 'new@example.com', invitedBy: 'Eve {1} {0}', url: 'https://a.example/signup?invite=i', validForMs: 7 * 86_400_000 });
    expect(mail.text).toContain('Eve {1} {0} invites you to make an account on Audio Share.');
  });

  it('say what each mail is for in its subject, and how long its link lasts', () => {
    const reset = passwordResetMail({ to: 'a@example.com', name: '', url: 'https://a.example/reset-password?token=t', validForMs: 3_600_000 });
    expect(reset.subject).toBe('Reset your Audio Share password');
    expect(reset.text).toContain('Hello there,');
    expect(reset.text).toContain('for 1 hour');
    expect(reset.text).toContain('Set a new password: https://a.example/reset-password?token=t');
    expect(verifyEmailMail({ to: 'a@example.com', name: 'A', url: 'https://a.example/v', validForMs: 86_400_000 }).subject).toBe('Confirm your email address for Audio Share');
    expect(invitationMail({ to: 'a@example.com', invitedBy: '', url: 'https://a.example/s', validForMs: 86_400_000 }).subject).toBe('You are invited to Audio Share');
  });

  it('refuse to link to anything but http(s)', () => {
    expect(() => passwordResetMail({ to: 'a@example.com', name: 'A', url: 'javascript:alert(1)', validForMs: 3_600_000 })).toThrow(/only link to http/);
    expect(escapeHtml(`<a href="x" onclick='y'>&`)).toBe('&lt;a href=&quot;x&quot; onclick=&#39;y&#39;&gt;&amp;');
  });

  it('quote a comment in a notification on one line, escaped, with the link to it as the only link of ours', () => {
    const mail = notificationMail({
      to: 'owner@example.com',
      kind: 'comment',
      track: 'Mix <v2>.wav',
      project: 'EP & co',
      actor: 'Alex\n\nYour account is locked',
      text: 'Great <img src=x onerror=alert(1)>\r\nhttps://evil.example',
      url: 'https://a.example/projects/p?file=f#comment-c',
      settingsUrl: 'https://a.example/settings',
    });
    expect(mail.subject).toBe('Alex Your account is locked commented on “Mix <v2>.wav”');
    expect(mail.text.split('\n\n').slice(0, 2)).toEqual(['Alex Your account is locked commented on “Mix <v2>.wav” in EP & co:', '“Great <img src=x onerror=alert(1)> https://evil.example”']);
    expect(mail.html).not.toContain('<img');
    expect(mail.html).toContain('“Great &lt;img src=x onerror=alert(1)&gt; https://evil.example”');
    expect(mail.html.match(/href="[^"]*"/g)).toEqual(['href="https://a.example/projects/p?file=f#comment-c"']);
    expect(notificationMail({ to: 'o@example.com', kind: 'analysis-failed', track: 'x.mp3', project: 'P', actor: null, text: 'not audio', url: 'https://a.example/projects/p?file=f', settingsUrl: 'https://a.example/settings' }).text).toContain('The reason: not audio');
  });

  it('list a digest’s notifications, each with its link, escaped', () => {
    const mail = notificationDigestMail({
      to: 'owner@example.com',
      name: 'Ada',
      items: [
        { summary: 'Sam <b>(guest)</b> commented', url: 'https://a.example/projects/p?file=f#comment-1' },
        { summary: 'Kim replied', url: 'https://a.example/projects/p?file=f#comment-2' },
      ],
      inboxUrl: 'https://a.example/inbox',
      settingsUrl: 'https://a.example/settings',
    });
    expect(mail.subject).toBe('Your daily digest: 2 notifications');
    expect(mail.text).toContain('- Sam <b>(guest)</b> commented\n  https://a.example/projects/p?file=f#comment-1\n- Kim replied\n  https://a.example/projects/p?file=f#comment-2');
    expect(mail.html).toContain('<li><a href="https://a.example/projects/p?file=f#comment-1">Sam &lt;b&gt;(guest)&lt;/b&gt; commented</a></li>');
    expect(() => notificationDigestMail({ to: 'o@example.com', name: '', items: [{ summary: 's', url: 'javascript:alert(1)' }], inboxUrl: 'https://a.example/inbox', settingsUrl: 'https://a.example/settings' })).toThrow(/only link to http/);
  });
});
