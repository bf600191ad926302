/**
 * The mails the server sends, as pure functions of what they say: a subject,
 * a plain-text body and a simple HTML one. Every value put in is someone's
 * text (an account's name, a player's name) or a link: each is made one line
 * and capped, so that a name cannot add paragraphs of its own to a mail sent
 * in the server's name, and escaped for HTML where it lands in HTML.
 */
import { escapeHtml } from '../lib/html.ts';
import type { MailMessage } from './mailer.ts';

const SERVICE = 'Audio Share';

/** The longest a name may run in a mail; past it, an ellipsis. */
const MAX_NAME = 80;

/** One line of someone's text: control characters and runs of spaces become one space, then it is capped. */
export function oneLine(text: string, max = MAX_NAME): string {
  // biome-ignore lint/suspicious/noControlCharactersInRegex: the control characters are what is removed.
  const line = text.replace(/[\u0000-\u001f\u007f-\u009f\u2028\u2029\s]+/g, ' ').trim();
  return line.length > max ? `${line.slice(0, max - 1)}…` : line;
}

/** A link the server made, checked again here: only http(s), so that no javascript: or data: link is ever mailed. */
function checkedLink(url: string): string {
  const parsed = new URL(url);
  if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') throw new Error(`A mail may only link to http(s), not ${parsed.protocol}`);
  return parsed.toString();
}

/** A mail before it is rendered; its paragraphs come from `paragraph`, whose template text is the server's own, never data. */
interface Mail {
  subject: string;
  /** Paragraphs of text, each already made of safe pieces. */
  paragraphs: { text: string; html: string }[];
  /** Links listed after the paragraphs, each with its words (someone's text, escaped here): a digest's notifications. */
  list?: { label: string; url: string }[];
  /** The button: its words and its link. */
  action: { label: string; url: string };
  /** Said after the link: why the mail came, what to do if it was not wanted. */
  footer: string;
}

function render(to: string, mail: Mail): MailMessage {
  const url = checkedLink(mail.action.url);
  const list = (mail.list ?? []).map((item) => ({ label: item.label, url: checkedLink(item.url) }));
  const listText = list.length ? [list.map((item) => `- ${item.label}\n  ${item.url}`).join('\n')] : [];
  const text = [...mail.paragraphs.map((paragraph) => paragraph.text), ...listText, `${mail.action.label}: ${url}`, mail.footer, `— ${SERVICE}`].join('\n\n') + '\n';
  const html = [
    '<!doctype html>',
    `<html><head><meta charset="utf-8"><title>${escapeHtml(mail.subject)}</title></head>`,
    '<body style="font-family: sans-serif; line-height: 1.5; max-width: 36em;">',
    ...mail.paragraphs.map((paragraph) => `<p>${paragraph.html}</p>`),
    ...(list.length ? [`<ul>${list.map((item) => `<li><a href="${escapeHtml(item.url)}">${escapeHtml(item.label)}</a></li>`).join('')}</ul>`] : []),
    `<p><a href="${escapeHtml(url)}" style="display: inline-block; padding: 0.5em 1em; background: #1f4fd1; color: #fff; text-decoration: none; border-radius: 4px;">${escapeHtml(mail.action.label)}</a></p>`,
    `<p style="font-size: 0.9em;">Or copy this link into your browser:<br>${escapeHtml(url)}</p>`,
    `<p style="font-size: 0.9em; color: #555;">${escapeHtml(mail.footer)}</p>`,
    `<p style="font-size: 0.9em; color: #555;">— ${SERVICE}</p>`,
    '</body></html>',
  ].join('\n');
  return { to, subject: mail.subject, text, html };
}

/**
 * A paragraph from the template's text with values in its `{0}`-style
 * slots, escaped for HTML. The slots are filled in one pass, so a value
 * with `{1}` in it stays as written.
 */
function paragraph(template: string, ...values: string[]): { text: string; html: string } {
  const fill = (encode: (value: string) => string) => template.replace(/\{(\d+)\}/g, (_, index: string) => encode(values[Number(index)] ?? ''));
  return { text: fill((value) => value), html: fill(escapeHtml) };
}

const minutes = (ms: number) => Math.round(ms / 60_000);
const validity = (ms: number) => (ms % 3_600_000 === 0 ? `${ms / 3_600_000} hour${ms === 3_600_000 ? '' : 's'}` : `${minutes(ms)} minutes`);
const validityDays = (ms: number) => (ms >= 2 * 86_400_000 && ms % 86_400_000 === 0 ? `${ms / 86_400_000} days` : validity(ms));

/** Mailed to the address an account gives, to prove it reads it: `/verify-email?token=…`. */
export function verifyEmailMail(input: { to: string; name: string; url: string; validForMs: number }): MailMessage {
  return render(input.to, {
    subject: `Confirm your email address for ${SERVICE}`,
    paragraphs: [
      paragraph('Hello {0},', oneLine(input.name) || 'there'),
      paragraph('Please confirm that {0} is your email address. Until you do, players shared with this address stay closed to your account.', input.to),
    ],
    action: { label: 'Confirm my email address', url: input.url },
    footer: `The link works once, for ${validityDays(input.validForMs)}. If you did not ask for it, ignore this mail: nothing changes.`,
  });
}

/** Mailed on a reset request for an account that exists: `/reset-password?token=…`, valid an hour. */
export function passwordResetMail(input: { to: string; name: string; url: string; validForMs: number }): MailMessage {
  return render(input.to, {
    subject: `Reset your ${SERVICE} password`,
    paragraphs: [
      paragraph('Hello {0},', oneLine(input.name) || 'there'),
      paragraph('Someone (we hope you) asked to set a new password for the account {0}. Setting one signs the account out everywhere, and ends its tokens, passkeys and connected apps.', input.to),
    ],
    action: { label: 'Set a new password', url: input.url },
    footer: `The link works once, for ${validity(input.validForMs)}. If you did not ask for it, ignore this mail: your password stays as it is.`,
  });
}

/** An administrator's invitation to make an account: `/signup?invite=…`. */
export function invitationMail(input: { to: string; invitedBy: string; url: string; validForMs: number }): MailMessage {
  const by = oneLine(input.invitedBy);
  return render(input.to, {
    subject: `You are invited to ${SERVICE}`,
    paragraphs: [by ? paragraph('{0} invites you to make an account on {1}.', by, SERVICE) : paragraph('You are invited to make an account on {0}.', SERVICE)],
    action: { label: 'Create my account', url: input.url },
    footer: `The invitation works once, for ${validityDays(input.validForMs)}. If you do not know why you got it, ignore this mail.`,
  });
}

/**
 * Open registration's answer to a sign-up for an address without an
 * account: the invitation link, for that address, that makes it
 * (`/signup?invite=…`). Sent instead of signing in at once, so that the
 * answer is the same as for an address that has an account.
 */
export function finishSignUpMail(input: { to: string; url: string; validForMs: number }): MailMessage {
  return render(input.to, {
    subject: `Finish signing up for ${SERVICE}`,
    paragraphs: [paragraph('Someone, probably you, asked to make an account on {0} with this address ({1}).', SERVICE, input.to), paragraph('Open the link to finish: it makes the account.')],
    action: { label: 'Finish signing up', url: input.url },
    footer: `The link works once, for ${validityDays(input.validForMs)}. If you did not ask for an account, ignore this mail: none is made.`,
  });
}

/**
 * Open registration's answer to a sign-up for an address that has an
 * account: word to its owner, who can sign in, or reset the password from
 * the sign-in page. The answer to the sign-up was the same as for a free
 * address; only the address's owner learns which it was.
 */
export function signUpAttemptMail(input: { to: string; name: string; signInUrl: string }): MailMessage {
  return render(input.to, {
    subject: `Someone tried to sign up for ${SERVICE} with your address`,
    paragraphs: [
      paragraph('Hello {0},', oneLine(input.name) || 'there'),
      paragraph('Someone asked to make an account on {0} with your address ({1}), which has an account already. No new account was made, and yours is unchanged.', SERVICE, input.to),
      paragraph('If it was you, sign in instead; if you forgot your password, "Forgot your password?" on the sign-in page mails you a link to set a new one.'),
    ],
    action: { label: 'Sign in', url: input.signInUrl },
    footer: 'If it was not you, you need do nothing: your password was not asked for, and nothing was shared.',
  });
}

/** A player shared with a collaborator's address: the invite link the API makes, to sign up (or sign in) and take the access. */
export function collaboratorInvitationMail(input: { to: string; invitedBy: string; playerName: string; role: string; url: string }): MailMessage {
  const by = oneLine(input.invitedBy) || 'Someone';
  const player = oneLine(input.playerName) || 'a player';
  return render(input.to, {
    // Fixed: the inviter chooses their name and the player's, and a subject of their words, mailed in the server's name
    // to any address, would be theirs to write ("Your account is locked", a phishing lure). Their words stay in the
    // body, one line each, escaped, and said to be theirs.
    subject: `An invitation to a player on ${SERVICE}`,
    paragraphs: [
      paragraph('{0} shared the player “{1}” with you on {2}, as {3}.', by, player, SERVICE, oneLine(input.role, 20)),
      paragraph('Create an account with this address ({0}), or sign in if you have one, to open it.', input.to),
    ],
    action: { label: 'Open the invitation', url: input.url },
    footer: 'If you do not know why you got this mail, ignore it: nothing is shared with anyone else.',
  });
}

/** What one notification's mail says: made by server/resources/notifications, every value someone's text. */
export interface NotificationMailInput {
  kind: 'comment' | 'reply' | 'portal-upload' | 'analysis-failed';
  /** The file it is about, the project it is in. */
  track: string;
  project: string;
  /** Who did it (a comment's author, a portal's uploader); null when nobody did (a failed analysis). */
  actor: string | null;
  /** The comment's words, or why the analysis failed. */
  text: string | null;
  /** Where to see it: the studio's page of its comment or file. */
  url: string;
}

/** The longest a comment's words run in a mail; past it, an ellipsis, and the link shows the rest. */
const MAX_QUOTE = 500;

/** A notification, mailed by itself soon after it happened (the setting `immediate`). */
export function notificationMail(input: NotificationMailInput & { to: string; settingsUrl: string }): MailMessage {
  const track = oneLine(input.track) || 'a file';
  const project = oneLine(input.project) || 'a project';
  const actor = oneLine(input.actor ?? '') || 'Someone';
  const quote = input.text === null ? [] : [paragraph('“{0}”', oneLine(input.text, MAX_QUOTE))];
  const footer = `You get this mail because of your notification settings; choose At once, Daily digest or Never at ${input.settingsUrl}.`;
  switch (input.kind) {
    case 'comment':
      return render(input.to, {
        subject: `${actor} commented on “${track}”`,
        paragraphs: [paragraph('{0} commented on “{1}” in {2}:', actor, track, project), ...quote],
        action: { label: 'Open the comment', url: input.url },
        footer,
      });
    case 'reply':
      return render(input.to, {
        subject: `${actor} replied to your comment on “${track}”`,
        paragraphs: [paragraph('{0} replied to your comment on “{1}” in {2}:', actor, track, project), ...quote],
        action: { label: 'Open the reply', url: input.url },
        footer,
      });
    case 'portal-upload':
      return render(input.to, {
        subject: `“${track}” arrived through your upload portal`,
        paragraphs: [paragraph('{0} sent “{1}” to {2} through your upload portal.', actor, track, project)],
        action: { label: 'Open the file', url: input.url },
        footer,
      });
    case 'analysis-failed':
      return render(input.to, {
        subject: `“${track}” could not be analysed`,
        paragraphs: [paragraph('“{0}” in {1} could not be analysed, so it cannot be played yet.', track, project), ...(input.text === null ? [] : [paragraph('The reason: {0}', oneLine(input.text, MAX_QUOTE))])],
        action: { label: 'Open the file', url: input.url },
        footer,
      });
  }
}

/** The day's notifications not yet mailed, in one mail (the setting `digest`): each a line and its link. */
export function notificationDigestMail(input: { to: string; name: string; items: { summary: string; url: string }[]; inboxUrl: string; settingsUrl: string }): MailMessage {
  const count = input.items.length;
  return render(input.to, {
    subject: `Your daily digest: ${count} notification${count === 1 ? '' : 's'}`,
    paragraphs: [paragraph('Hello {0},', oneLine(input.name) || 'there'), paragraph(`Here is what happened since your last digest (${count}):`)],
    list: input.items.map((item) => ({ label: oneLine(item.summary, 400), url: item.url })),
    action: { label: 'Open your inbox', url: input.inboxUrl },
    footer: `You get one mail a day because of your notification settings; choose At once, Daily digest or Never at ${input.settingsUrl}.`,
  });
}
