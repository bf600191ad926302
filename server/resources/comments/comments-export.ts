/**
 * A file's comments as a file to save (exportComments), so that the notes
 * land on the timeline of the musician's editor: plain text, CSV, an
 * Audacity label track, REAPER's marker/region CSV. Pure functions of the
 * comments: the handler loads them and sends the answer.
 */
import type { CommentRecord } from './comment-repository.ts';
import { MEMBER_FALLBACK_NAME } from './comments-service.ts';

export type ExportFormat = 'text' | 'csv' | 'audacity' | 'reaper';

export interface ExportedFile {
  /** The Content-Type to send. */
  contentType: string;
  /** The name to save it under (Content-Disposition). */
  filename: string;
  body: string;
}

/**
 * One line of text: control characters (C0, DEL, C1) and the Unicode line
 * and paragraph separators become one space, so that a label or a CSV
 * field is one line whatever the message held; bidirectional embeddings,
 * overrides and isolates go, so that a name cannot show its text reversed
 * in an editor's marker list (CVE-2021-42574, "Trojan Source").
 */
export function oneLine(text: string): string {
  return text
    .replace(/[\u202a-\u202e\u2066-\u2069]/g, '')
    .replace(/[\p{Cc}\u2028\u2029]+/gu, ' ')
    .replace(/ {2,}/g, ' ')
    .trim();
}

/** The author as the pages show them: a listener's name marked as a guest's. */
export function authorOf(comment: CommentRecord): string {
  const name = oneLine(comment.author.name ?? MEMBER_FALLBACK_NAME) || MEMBER_FALLBACK_NAME;
  return comment.author.kind === 'listener' ? `${name} (guest)` : name;
}

/** `m:ss`, or `h:mm:ss` from an hour on; whole seconds, rounded down. */
export function clock(seconds: number): string {
  const whole = Math.floor(seconds);
  const h = Math.floor(whole / 3600);
  const m = Math.floor((whole % 3600) / 60);
  const s = String(whole % 60).padStart(2, '0');
  return h > 0 ? `${h}:${String(m).padStart(2, '0')}:${s}` : `${m}:${s}`;
}

/** Top-level comments in timeline order (timed by their time, then the rest), each followed by its replies, oldest first. */
export function timelineOrder(comments: readonly CommentRecord[]): Array<{ comment: CommentRecord; parent?: CommentRecord }> {
  const byCreation = (a: CommentRecord, b: CommentRecord) => a.timeCreated - b.timeCreated || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0);
  const topLevel = comments
    .filter((comment) => comment.parentId === null)
    .sort((a, b) => {
      if (a.audioTimestamp !== null && b.audioTimestamp !== null) return a.audioTimestamp - b.audioTimestamp || byCreation(a, b);
      if (a.audioTimestamp !== null) return -1;
      if (b.audioTimestamp !== null) return 1;
      return byCreation(a, b);
    });
  const replies = new Map<string, CommentRecord[]>();
  for (const comment of comments) {
    if (comment.parentId !== null) replies.set(comment.parentId, [...(replies.get(comment.parentId) ?? []), comment]);
  }
  return topLevel.flatMap((parent) => [{ comment: parent }, ...(replies.get(parent.id) ?? []).sort(byCreation).map((comment) => ({ comment, parent }))]);
}

/**
 * A CSV field that a spreadsheet would not run: OWASP "CSV Injection" —
 * cells starting with `=`, `+`, `-`, `@`, tab or carriage return are read
 * as formulas, so they get a leading `'`, which shows the rest as text.
 */
export function guardFormula(field: string): string {
  return /^[=+\-@\t\r]/.test(field) ? `'${field}` : field;
}

/**
 * RFC 4180 §2: "Fields containing line breaks (CRLF), double quotes, and
 * commas should be enclosed in double-quotes", and "a double-quote
 * appearing inside a field must be escaped by preceding it with another
 * double quote". `always`: quote every field.
 */
function csvField(field: string, always: boolean): string {
  const guarded = guardFormula(field);
  return always || /[",\r\n]|^\s|\s$/.test(guarded) ? `"${guarded.replace(/"/g, '""')}"` : guarded;
}

/** RFC 4180 §2: "Each record is located on a separate line, delimited by a line break (CRLF)", the last one included. */
const csvRecords = (records: string[][], always: boolean) => records.map((record) => `${record.map((field) => csvField(field, always)).join(',')}\r\n`).join('');

/** Seconds as the text of a number: no exponent, no trailing zeros. */
const seconds = (value: number) => String(value);
/** Seconds to the microsecond, as Audacity writes its labels. */
const micro = (value: number) => value.toFixed(6);

function text(comments: readonly CommentRecord[]): string {
  return timelineOrder(comments)
    .map(({ comment, parent }) => {
      const line = `${authorOf(comment)}: ${oneLine(comment.message)}`;
      if (parent) return `    ${line}\n`;
      if (comment.audioTimestamp === null) return `${line}\n`;
      const range = comment.audioTimestampEnd === null ? clock(comment.audioTimestamp) : `${clock(comment.audioTimestamp)}-${clock(comment.audioTimestampEnd)}`;
      return `[${range}] ${line}\n`;
    })
    .join('');
}

function csv(comments: readonly CommentRecord[]): string {
  const rows = timelineOrder(comments).map(({ comment, parent }) => {
    // A reply is about the moment of the comment it answers (it takes no timestamps of its own).
    const at = parent ?? comment;
    return [
      at.audioTimestamp === null ? '' : seconds(at.audioTimestamp),
      at.audioTimestampEnd === null ? '' : seconds(at.audioTimestampEnd),
      authorOf(comment),
      oneLine(comment.message),
      String(comment.completed),
      new Date(comment.timeCreated).toISOString(),
    ];
  });
  return csvRecords([['time', 'end', 'author', 'message', 'done', 'created'], ...rows], true);
}

/** The comments a timeline shows: top-level ones with a time, in its order. */
const onTimeline = (comments: readonly CommentRecord[]) =>
  timelineOrder(comments)
    .filter(({ comment, parent }) => !parent && comment.audioTimestamp !== null)
    .map(({ comment }) => ({ comment, start: comment.audioTimestamp!, end: comment.audioTimestampEnd, label: `${authorOf(comment)}: ${oneLine(comment.message)}` }));

/** Audacity's label track (File › Import › Labels): `start<TAB>end<TAB>label` a line; a point label has end = start. */
function audacity(comments: readonly CommentRecord[]): string {
  return onTimeline(comments)
    .map(({ start, end, label }) => `${micro(start)}\t${micro(end ?? start)}\t${label}\n`)
    .join('');
}

/**
 * REAPER's Region/Marker Manager CSV: `#,Name,Start,End,Length`, then
 * `M<n>,name,start,,` for a marker and `R<n>,name,start,end,length` for a
 * region; markers and regions are numbered apart, as REAPER numbers them.
 */
function reaper(comments: readonly CommentRecord[]): string {
  let markers = 0;
  let regions = 0;
  const rows = onTimeline(comments).map(({ start, end, label }) =>
    end === null ? [`M${++markers}`, label, micro(start), '', ''] : [`R${++regions}`, label, micro(start), micro(end), micro(end - start)],
  );
  return csvRecords([['#', 'Name', 'Start', 'End', 'Length'], ...rows], false);
}

/** The name to save under: the file's name without its extension, and the format's ending. */
export function exportFilename(fileName: string, format: ExportFormat): string {
  const base = fileName.replace(/\.[^./\\]{1,10}$/, '') || 'comments';
  const ending = { text: '-comments.txt', csv: '-comments.csv', audacity: '-labels.txt', reaper: '-markers.csv' }[format];
  return `${base}${ending}`;
}

export function exportComments(fileName: string, comments: readonly CommentRecord[], format: ExportFormat): ExportedFile {
  const filename = exportFilename(fileName, format);
  switch (format) {
    case 'text':
      return { contentType: 'text/plain; charset=utf-8', filename, body: text(comments) };
    case 'csv':
      return { contentType: 'text/csv; charset=utf-8', filename, body: csv(comments) };
    case 'audacity':
      return { contentType: 'text/plain; charset=utf-8', filename, body: audacity(comments) };
    case 'reaper':
      return { contentType: 'text/csv; charset=utf-8', filename, body: reaper(comments) };
  }
}
