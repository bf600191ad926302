/**
 * Comments on the version playing: a list beside the waveform and markers on
 * it, both seeking on a click; a form that posts at the playhead or over a
 * range dragged on the waveform; replies one level deep; "Done" for the
 * author and for members who can write the project (comments.yaml,
 * UpdateCommentRequest: "The author may change `message` and `completed` of
 * their own comment; members who can write the project may change
 * `completed` and `pinned` of any comment").
 */
import type { Comment, PlayerApi, PlayerView, ViewTrack, ViewVersion } from './api.ts';
import { append, formatTime, h, replaceChildren } from './dom.ts';
import { renderMessage } from './markdown.ts';
import type { Marker } from './waveform.ts';

export interface CommentsHost {
  currentTime(): number;
  seek(time: number): void;
  showMarkers(versionId: string, markers: Marker[]): void;
  clearRange(versionId: string): void;
}

export class CommentsPanel {
  readonly element: HTMLElement;
  private readonly heading = h('h2', {}, 'Comments');
  private readonly list = h('ol', { class: 'comment-list' });
  private readonly nameInput = h('input', { type: 'text', maxlength: '100', autocomplete: 'name' });
  private readonly nameField = h('label', { class: 'field' }, 'Your name', this.nameInput);
  private readonly messageInput = h('textarea', { rows: '3', maxlength: '5000', required: true });
  private readonly pinToTime = h('input', { type: 'checkbox', checked: true });
  private readonly where = h('span', { class: 'where' });
  private readonly alert = h('p', { class: 'alert', role: 'alert' });
  private readonly postButton = h('button', { type: 'submit' }, 'Post comment');
  private readonly clearRangeButton = h('button', { type: 'button', class: 'link', onclick: () => this.clearRange() }, 'Clear range');
  private version?: ViewVersion;
  private comments: Comment[] = [];
  private range?: { start: number; end: number };
  private viewerName?: string;

  private readonly api: PlayerApi;
  private view: PlayerView;
  private readonly host: CommentsHost;

  constructor(
    api: PlayerApi,
    view: PlayerView,
    host: CommentsHost,
  ) {
    this.api = api;
    this.view = view;
    this.host = host;
    this.viewerName = view.access.viewer.name;
    const form = h(
      'form',
      { class: 'comment-form', novalidate: true },
      this.nameField,
      h('label', { class: 'field' }, 'Comment', this.messageInput),
      h('div', { class: 'form-row' }, h('label', {}, this.pinToTime, ' ', this.where), this.clearRangeButton, this.postButton),
      this.alert,
    );
    form.addEventListener('submit', (event) => {
      event.preventDefault();
      void this.post();
    });
    this.element = h('section', { id: 'comments', class: 'comments', 'aria-label': 'Comments' }, this.heading, this.list, form);
    this.showName();
    this.showWhere();
  }

  private showName(): void {
    this.nameField.hidden = Boolean(this.viewerName) || this.view.access.viewer.kind === 'member';
  }

  /** Where the comment will sit: the range dragged, else the playhead (the page calls this as the playhead moves). */
  showWhere(): void {
    this.where.textContent = this.range ? `From ${formatTime(this.range.start)} to ${formatTime(this.range.end)}` : `At ${formatTime(this.host.currentTime())}`;
    this.clearRangeButton.hidden = !this.range;
  }

  adopt(view: PlayerView): void {
    this.view = view;
  }

  /** Shows the comments of the version the page plays now. */
  async show(track: ViewTrack, version: ViewVersion): Promise<void> {
    if (this.version?.id === version.id) return;
    this.version = version;
    this.range = undefined;
    this.showWhere();
    this.heading.textContent = track.versions.length > 1 ? `Comments on ${track.name} (${version.versionName ?? version.name})` : `Comments on ${track.name}`;
    const answer = await this.api.comments(version.id);
    if (this.version.id !== version.id) return;
    if (!answer.ok) {
      this.comments = [];
      this.alert.textContent = answer.refusal.detail;
    } else {
      this.comments = answer.data;
      this.alert.textContent = '';
    }
    this.renderList();
  }

  setRange(versionId: string, start: number, end: number): void {
    if (this.version?.id !== versionId) return;
    this.range = { start, end };
    this.pinToTime.checked = true;
    this.showWhere();
  }

  private clearRange(): void {
    if (this.version) this.host.clearRange(this.version.id);
    this.range = undefined;
    this.showWhere();
  }

  refreshMarkers(versionId: string): void {
    if (versionId !== this.version?.id) return;
    this.host.showMarkers(
      versionId,
      this.comments
        .filter((comment) => !comment.isReply && comment.audioTimestamp !== undefined)
        .map((comment) => ({ id: comment.id, time: comment.audioTimestamp!, end: comment.audioTimestampEnd, label: authorLabel(comment) })),
    );
  }

  private renderList(): void {
    const topLevel = this.comments.filter((comment) => !comment.isReply).sort(byPinThenTime);
    const replies = (parent: Comment) => this.comments.filter((comment) => comment.parentid === parent.id).sort((a, b) => a.timeCreated - b.timeCreated);
    replaceChildren(
      this.list,
      ...topLevel.map((comment) => this.renderComment(comment, replies(comment))),
      topLevel.length === 0 ? h('li', { class: 'empty' }, 'No comments yet. Pause where something strikes you and say so.') : null,
    );
    if (this.version) this.refreshMarkers(this.version.id);
  }

  private renderComment(comment: Comment, replies: Comment[]): HTMLLIElement {
    const item = h('li', {
      class: `comment${comment.completed ? ' completed' : ''}${comment.pinned ? ' pinned' : ''}`,
      dataset: { commentId: comment.id, ...(comment.audioTimestamp !== undefined ? { time: String(comment.audioTimestamp) } : {}) },
    });
    const time =
      comment.audioTimestamp !== undefined
        ? h(
            'button',
            { type: 'button', class: 'time', 'aria-label': `Seek to ${formatTime(comment.audioTimestamp)}`, onclick: () => this.host.seek(comment.audioTimestamp!) },
            comment.audioTimestampEnd !== undefined ? `${formatTime(comment.audioTimestamp)}–${formatTime(comment.audioTimestampEnd)}` : formatTime(comment.audioTimestamp),
          )
        : null;
    const mayComplete = comment.creator.mine || this.view.access.viewer.canModerate === true;
    const done = mayComplete
      ? h('label', { class: 'done' }, h('input', { type: 'checkbox', checked: comment.completed, onchange: (event: Event) => this.complete(comment, (event.target as HTMLInputElement).checked) }), ' Done')
      : comment.completed
        ? h('span', { class: 'done' }, 'Done')
        : null;
    append(item, [
      h('div', { class: 'comment-head' }, time, h('strong', { class: 'author' }, comment.creator.name), guestBadge(comment), comment.pinned ? h('span', { class: 'badge' }, 'Pinned') : null, done),
      renderMessage(comment.message),
    ]);
    if (!comment.isReply) {
      const replyList = h('ol', { class: 'replies' }, ...replies.map((reply) => this.renderComment(reply, [])));
      const replyButton = h('button', { type: 'button', class: 'link', 'aria-expanded': 'false' }, 'Reply');
      replyButton.addEventListener('click', () => this.openReply(item, comment, replyButton));
      append(item, [replyList, replyButton]);
    }
    return item;
  }

  private openReply(item: HTMLElement, parent: Comment, button: HTMLButtonElement): void {
    if (item.querySelector('.reply-form')) return;
    button.setAttribute('aria-expanded', 'true');
    const input = h('textarea', { rows: '2', maxlength: '5000', 'aria-label': 'Reply' });
    const form = h('form', { class: 'reply-form' }, input, h('button', { type: 'submit' }, 'Post reply'));
    form.addEventListener('submit', async (event) => {
      event.preventDefault();
      const message = input.value.trim();
      if (!message || !(await this.ensureName())) return;
      const answer = await this.api.postComment(parent.fileid, { message, parentid: parent.id });
      if (!answer.ok) return void (this.alert.textContent = answer.refusal.detail);
      this.comments.push(answer.data);
      this.renderList();
    });
    item.append(form);
    input.focus();
  }

  private async complete(comment: Comment, completed: boolean): Promise<void> {
    const answer = await this.api.updateComment(comment.fileid, comment.id, { completed });
    if (!answer.ok) {
      this.alert.textContent = answer.refusal.detail;
      return this.renderList();
    }
    this.comments = this.comments.map((existing) => (existing.id === comment.id ? answer.data : existing));
    this.renderList();
  }

  /** A listener without a display name gives one first: the session keeps it, so they type it once. */
  private async ensureName(): Promise<boolean> {
    if (this.viewerName || this.view.access.viewer.kind === 'member') return true;
    const name = this.nameInput.value.trim();
    if (!name) {
      this.alert.textContent = 'Type the name your comments will show under, then post again.';
      this.nameInput.focus();
      return false;
    }
    const answer = await this.api.openSession({ name });
    if (!answer.ok) {
      this.alert.textContent = answer.refusal.detail;
      return false;
    }
    this.viewerName = answer.data.access.viewer.name ?? name;
    this.showName();
    return true;
  }

  private async post(): Promise<void> {
    const version = this.version;
    const message = this.messageInput.value.trim();
    if (!version) return;
    if (!message) {
      this.alert.textContent = 'Write a comment first.';
      return this.messageInput.focus();
    }
    this.postButton.disabled = true;
    try {
      if (!(await this.ensureName())) return;
      const at = this.pinToTime.checked ? (this.range ?? { start: this.host.currentTime(), end: undefined }) : undefined;
      const answer = await this.api.postComment(version.id, {
        message,
        ...(at ? { audioTimestamp: round(at.start), ...(at.end !== undefined ? { audioTimestampEnd: round(at.end) } : {}) } : {}),
      });
      if (!answer.ok) {
        this.alert.textContent = answer.refusal.retryAfter ? `${answer.refusal.detail} Try again in ${answer.refusal.retryAfter} s.` : answer.refusal.detail;
        return;
      }
      this.alert.textContent = '';
      this.messageInput.value = '';
      this.comments.push(answer.data);
      this.clearRange();
      this.renderList();
    } finally {
      this.postButton.disabled = false;
    }
  }
}

/**
 * A listener's comment carries the visible word "Guest" beside the name,
 * a member's does not: the name is whatever the listener typed ("Project
 * member", or a member's own name), and only the server knows who is a
 * member (comments.yaml, CommentCreator `kind`).
 */
const isGuest = (comment: Comment) => comment.creator.kind !== 'member';
const guestBadge = (comment: Comment) => (isGuest(comment) ? h('span', { class: 'badge guest' }, 'Guest') : null);
/** What a marker on the waveform is labelled with: the name, and "(Guest)" for a listener's. */
const authorLabel = (comment: Comment) => (isGuest(comment) ? `${comment.creator.name} (Guest)` : comment.creator.name);

/** Hundredths of a second: what a listener can point at, and what the API stores. */
const round = (seconds: number) => Math.round(seconds * 100) / 100;

function byPinThenTime(a: Comment, b: Comment): number {
  if (a.pinned !== b.pinned) return a.pinned ? -1 : 1;
  const at = a.audioTimestamp ?? Number.POSITIVE_INFINITY;
  const bt = b.audioTimestamp ?? Number.POSITIVE_INFINITY;
  return at !== bt ? at - bt : a.timeCreated - b.timeCreated;
}
