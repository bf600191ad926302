/**
 * Comments across files, on SQLite and PostgreSQL, through the HTTP API: a
 * project's comments with the track each is on, the inbox (its comments,
 * its counts, the files portals hold), and the export of a file's comments
 * in each format, parsed back and compared with the comments made.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import type { ApiClient, Schemas } from '../../../generated/client.ts';
import { backends } from '../../testing/databases.ts';
import { json, useTestServer } from '../../testing/harness.ts';
import { patchUpload, startPortalUpload } from '../../testing/portal.ts';

type Comment = Schemas['Comment'];

/**
 * A strict RFC 4180 parser: records end in CRLF; a field is either
 * unquoted (no `"`, `,`, CR or LF in it) or quoted, with `""` for a quote.
 * Anything else throws, so that a malformed export fails the test.
 */
function parseCsv(text: string): string[][] {
  const records: string[][] = [];
  let i = 0;
  while (i < text.length) {
    const record: string[] = [];
    for (;;) {
      let field = '';
      if (text[i] === '"') {
        i += 1;
        for (;;) {
          if (i >= text.length) throw new Error('unterminated quoted field');
          if (text[i] === '"') {
            if (text[i + 1] === '"') {
              field += '"';
              i += 2;
              continue;
            }
            i += 1;
            break;
          }
          field += text[i++];
        }
      } else {
        while (i < text.length && !/[",\r\n]/.test(text[i])) field += text[i++];
        if (text[i] === '"') throw new Error(`a quote inside an unquoted field at ${i}`);
      }
      record.push(field);
      if (text[i] === ',') {
        i += 1;
        continue;
      }
      if (text.startsWith('\r\n', i)) {
        i += 2;
        break;
      }
      throw new Error(`a record must end in CRLF (at ${i}: ${JSON.stringify(text.slice(i, i + 10))})`);
    }
    records.push(record);
  }
  return records;
}

describe('parseCsv (the test parser itself)', () => {
  it('reads quoted fields with commas, quotes and line breaks, and refuses what RFC 4180 does not allow', () => {
    expect(parseCsv('a,"b,""c""\r\nd",\r\n')).toEqual([['a', 'b,"c"\r\nd', '']]);
    expect(() => parseCsv('a,b\n')).toThrow(/CRLF/);
    expect(() => parseCsv('a"b\r\n')).toThrow(/quote/);
    expect(() => parseCsv('"a\r\n')).toThrow(/unterminated/);
  });
});

describe.each(backends)('comments across files on %s', (backend) => {
  const t = useTestServer(backend);
  let n = 0;

  async function comment(api: ApiClient, projectid: string, fileid: string, body: Schemas['CreateCommentRequest']): Promise<Comment> {
    const { data, error } = await api.POST('/projects/{projectid}/files/{fileid}/comments', { params: { path: { projectid, fileid } }, body });
    expect(error).toBeUndefined();
    return data!;
  }

  /** Opens a listener session on the player, as its page does; resolves to its Cookie header. */
  async function listenerSession(playerid: string, name: string): Promise<string> {
    const response = await t.fetch(`/players/${playerid}/session`, { ...json({ name }), headers: { 'Content-Type': 'application/json', 'Sec-Fetch-Site': 'same-origin' } });
    expect(response.status).toBe(200);
    return response.headers.get('set-cookie')!.split(';')[0];
  }

  async function asListener(cookie: string, playerid: string, fileid: string, body: Schemas['CreateCommentRequest']): Promise<Comment> {
    const response = await t.fetch(`/players/${playerid}/files/${fileid}/comments`, { ...json(body), headers: { 'Content-Type': 'application/json', Cookie: cookie } });
    expect(response.status, await response.clone().text()).toBe(200);
    return response.json();
  }

  /**
   * A fresh owner's project "Album": a stack "mix" of two versions (mix.wav,
   * then mix v2.wav named "v2"), a public player with comments on, and an
   * editor and a viewer invited on it.
   */
  async function setup(name = 'Album') {
    n += 1;
    const owner = await t.as(`inbox-owner${n}@example.com`);
    const { data: project } = await owner.api.POST('/projects', { body: { name } });
    const projectid = project!.id;
    const first = (await owner.api.uploadFile(projectid, { name: 'mix.wav', mimeType: 'audio/wav' }, new TextEncoder().encode('RIFF one'))).data!;
    const stackid = first.upload.stackid;
    const second = (await owner.api.uploadFile(projectid, { name: 'mix v2.wav', mimeType: 'audio/wav', parentid: stackid }, new TextEncoder().encode('RIFF two'))).data!;
    const v2 = second.box.id;
    expect(second.upload.stackid).toBe(stackid);
    const named = await owner.api.POST('/projects/{projectid}/files/{fileid}', { params: { path: { projectid, fileid: v2 } }, body: { versionName: 'v2' } });
    expect(named.error).toBeUndefined();
    const { data: player } = await owner.api.POST('/players', {
      body: {
        name: 'Review',
        projectid,
        public: true,
        // stacks: every version shows, so that a listener may comment on either.
        options: { comments: true, stacks: true },
        collaborators: [
          { email: `inbox-editor${n}@example.com`, role: 'editor' },
          { email: `inbox-viewer${n}@example.com`, role: 'viewer' },
        ],
      },
    });
    // The stack an upload makes is named after the file (the studio drops the extension): read it rather than guess.
    const { data: stack } = await owner.api.GET('/projects/{projectid}/files/{fileid}', { params: { path: { projectid, fileid: stackid } } });
    return {
      owner,
      stackName: stack!.name,
      editor: await t.as(`inbox-editor${n}@example.com`),
      viewer: await t.as(`inbox-viewer${n}@example.com`),
      stranger: await t.as(`inbox-stranger${n}@example.com`),
      projectid,
      stackid,
      v1: first.box.id,
      v2,
      playerid: player!.id,
    };
  }

  // The first requests to a fresh server compile the validator's schemas for each operation they reach
  // (express-openapi-validator does it lazily): tens of seconds on a loaded machine. Paid here, under the
  // hook's longer timeout, rather than by whichever test runs first.
  beforeAll(async () => {
    const { owner, projectid, v1 } = await setup('Warm-up');
    await comment(owner.api, projectid, v1, { message: 'Warm-up' });
    await owner.api.GET('/projects/{projectid}/comments', { params: { path: { projectid } } });
  });

  describe('listProjectComments', () => {
    it('lists every comment of the project, newest first, replies included, each with its track; filters by status', async () => {
      const { owner, viewer, stranger, projectid, stackid, stackName, v1, v2, playerid } = await setup();
      const a = await comment(owner.api, projectid, v1, { message: 'On v1', audioTimestamp: 1 });
      const cookie = await listenerSession(playerid, 'Alex');
      const b = await asListener(cookie, playerid, v2, { message: 'On v2, from a listener' });
      const c = await comment(owner.api, projectid, v2, { message: 'Thanks', parentid: b.id });
      await owner.api.POST('/projects/{projectid}/files/{fileid}/comments/{commentid}', { params: { path: { projectid, fileid: v1, commentid: a.id } }, body: { completed: true, react: '👍' } });

      const { data, response } = await viewer.api.GET('/projects/{projectid}/comments', { params: { path: { projectid } } });
      expect(response.status).toBe(200);
      expect(data!.map((x) => x.id)).toEqual([c.id, b.id, a.id]);
      const track = { stackid, stackName, projectid, projectName: 'Album' };
      expect(data![0]).toMatchObject({ message: 'Thanks', isReply: true, parentid: b.id, track: { ...track, fileid: v2, name: 'mix v2.wav', versionName: 'v2' } });
      expect(data![1]).toMatchObject({ creator: { name: 'Alex', kind: 'listener', mine: false }, track: { fileid: v2 } });
      expect(data![2]).toMatchObject({ completed: true, reactions: { '👍': { count: 1, mine: false } }, track: { ...track, fileid: v1, name: 'mix.wav', versionName: null } });
      expect(data![1].reactions).toEqual({});

      // The reaction is the owner's own when they read it.
      const byOwner = await owner.api.GET('/projects/{projectid}/comments', { params: { path: { projectid } } });
      expect(byOwner.data![2].reactions).toEqual({ '👍': { count: 1, mine: true } });
      const open = await owner.api.GET('/projects/{projectid}/comments', { params: { path: { projectid }, query: { status: 'open' } } });
      expect(open.data!.map((x) => x.id)).toEqual([c.id, b.id]);
      const done = await owner.api.GET('/projects/{projectid}/comments', { params: { path: { projectid }, query: { status: 'done' } } });
      expect(done.data!.map((x) => x.id)).toEqual([a.id]);

      // The lists of one file stay as they were: no track.
      const { data: one } = await owner.api.GET('/projects/{projectid}/files/{fileid}/comments', { params: { path: { projectid, fileid: v1 } } });
      expect(one![0]).not.toHaveProperty('track');

      expect((await t.fetch(`/projects/${projectid}/comments`, { token: stranger.token })).status).toBe(404);
      const bad = await t.fetch(`/projects/${projectid}/comments?status=closed`, { token: owner.token });
      expect(bad.status).toBe(400);
    });

    it('pages with limit and an opaque cursor, keeping the status filter, nothing twice and nothing skipped', async () => {
      const { owner, projectid, v1 } = await setup();
      const made: string[] = [];
      for (let i = 0; i < 5; i++) made.push((await comment(owner.api, projectid, v1, { message: `Note ${i}` })).id);
      const seen: string[] = [];
      let next: string | undefined = `/projects/${projectid}/comments?status=open&limit=2`;
      let pages = 0;
      while (next) {
        const response = await t.fetch(next, { token: owner.token });
        expect(response.status).toBe(200);
        seen.push(...((await response.json()) as Comment[]).map((x) => x.id));
        const link = response.headers.get('link');
        next = link ? new URL(/^<([^>]+)>; rel="next"$/.exec(link)![1]).href.slice(t.server.apiUrl.length) : undefined;
        if (next) expect(next).toContain('status=open');
        pages += 1;
      }
      expect(pages).toBe(3);
      expect(seen).toEqual([...made].reverse());
    });

    it('leaves out the comments of files in the trash, and lists them again once restored', async () => {
      const { owner, projectid, stackid, v1 } = await setup();
      await comment(owner.api, projectid, v1, { message: 'Soon in the trash' });
      const trash = (trashed: boolean) => owner.api.POST('/projects/{projectid}/files/{fileid}', { params: { path: { projectid, fileid: stackid } }, body: { trashed } });
      await trash(true);
      expect((await owner.api.GET('/projects/{projectid}/comments', { params: { path: { projectid } } })).data).toEqual([]);
      await trash(false);
      expect((await owner.api.GET('/projects/{projectid}/comments', { params: { path: { projectid } } })).data).toHaveLength(1);
    });
  });

  describe('the inbox', () => {
    it("lists the comments of the caller's projects, open first then newest; an editor's inbox has them, a viewer's does not", async () => {
      const first = await setup('First');
      const { owner } = first;
      // A second project of the same owner.
      const { data: other } = await owner.api.POST('/projects', { body: { name: 'Second' } });
      const otherFile = (await owner.api.uploadFile(other!.id, { name: 'demo.wav', mimeType: 'audio/wav' }, new TextEncoder().encode('RIFF demo'))).data!.box.id;

      const cookie = await listenerSession(first.playerid, 'Alex');
      const old = await asListener(cookie, first.playerid, first.v1, { message: 'Old, open', audioTimestamp: 0.5 });
      const done = await comment(first.editor.api, first.projectid, first.v2, { message: 'Done already', completed: true });
      const mine = await comment(owner.api, other!.id, otherFile, { message: 'My own note' });
      const reply = await comment(owner.api, first.projectid, first.v1, { message: 'On it', parentid: old.id });

      const { data, response } = await owner.api.GET('/me/comments');
      expect(response.status).toBe(200);
      expect(data!.map((x) => x.id)).toEqual([reply.id, mine.id, old.id, done.id]);
      expect(data!.find((x) => x.id === mine.id)).toMatchObject({ creator: { mine: true }, track: { projectid: other!.id, projectName: 'Second', name: 'demo.wav' } });
      expect(data!.find((x) => x.id === old.id)).toMatchObject({ creator: { kind: 'listener', name: 'Alex', mine: false }, track: { projectName: 'First', fileid: first.v1 } });

      const open = await owner.api.GET('/me/comments', { params: { query: { status: 'open' } } });
      expect(open.data!.map((x) => x.id)).toEqual([reply.id, mine.id, old.id]);

      // The editor acts on the project: its comments are in their inbox; the viewer only reads it.
      const editorInbox = await first.editor.api.GET('/me/comments');
      expect(editorInbox.data!.map((x) => x.id).sort()).toEqual([old.id, done.id, reply.id].sort());
      expect(editorInbox.data!.find((x) => x.id === done.id)!.creator.mine).toBe(true);
      expect((await first.viewer.api.GET('/me/comments')).data).toEqual([]);
      expect((await first.stranger.api.GET('/me/comments')).data).toEqual([]);
    });

    it("counts the open comments that are not the caller's; replying and marking done work from the inbox", async () => {
      const { owner, editor, projectid, v1, playerid } = await setup();
      const summary = async (api: ApiClient) => (await api.GET('/me/inbox')).data!;
      expect(await summary(owner.api)).toEqual({ openComments: 0, heldFiles: 0 });

      const cookie = await listenerSession(playerid, 'Guest Critic');
      const listener = await asListener(cookie, playerid, v1, { message: 'Too much reverb', audioTimestamp: 1 });
      await comment(owner.api, projectid, v1, { message: 'A note to self' });
      expect(await summary(owner.api)).toEqual({ openComments: 1, heldFiles: 0 });
      // For the editor, the owner's note is someone else's.
      expect((await summary(editor.api)).openComments).toBe(2);

      // Reply: the existing createComment with parentid. Done: updateComment with completed.
      const reply = await comment(owner.api, projectid, v1, { message: 'Fixed in the next mix', parentid: listener.id });
      expect(reply).toMatchObject({ isReply: true, parentid: listener.id, creator: { mine: true } });
      const marked = await owner.api.POST('/projects/{projectid}/files/{fileid}/comments/{commentid}', { params: { path: { projectid, fileid: v1, commentid: listener.id } }, body: { completed: true } });
      expect(marked.data).toMatchObject({ completed: true });
      expect(await summary(owner.api)).toEqual({ openComments: 0, heldFiles: 0 });
      const { data } = await owner.api.GET('/me/comments');
      // The done comment goes last: open ones (the owner's two) come first.
      expect(data!.at(-1)!.id).toBe(listener.id);
    });

    it('lists the files a portal holds, with their project, until a member moves them out; not those still uploading', async () => {
      const { owner, viewer, projectid } = await setup('Stems');
      const { data: portal } = await owner.api.POST('/players', { body: { name: 'Drop', projectid, upload: { enabled: true } } });
      const url = await startPortalUpload(t.server.apiUrl, portal!.id, { size: 4, filename: 'notes.txt', filetype: 'text/plain', name: 'Sam Rivera' });
      // An upload under way is not a file that arrived.
      await startPortalUpload(t.server.apiUrl, portal!.id, { size: 10, filename: 'later.txt', filetype: 'text/plain', name: 'Sam Rivera' });
      expect((await owner.api.GET('/me/held-files')).data).toEqual([]);
      expect((await patchUpload(url, 0, Buffer.from('hey!'))).status).toBe(204);

      const { data: held } = await owner.api.GET('/me/held-files');
      expect(held).toHaveLength(1);
      expect(held![0]).toMatchObject({ object: 'held_file', projectid, projectName: 'Stems', file: { object: 'file', name: 'notes.txt', status: 'ready', uploader: { name: 'Sam Rivera' } } });
      expect((await owner.api.GET('/me/inbox')).data).toEqual({ openComments: 0, heldFiles: 1 });
      expect((await viewer.api.GET('/me/held-files')).data).toEqual([]);

      // Filing it: its stack moves out of the held folder (to the top level).
      const stackid = held![0].file.parentid!;
      const { data: stack } = await owner.api.GET('/projects/{projectid}/files/{fileid}', { params: { path: { projectid, fileid: stackid } } });
      const heldFolder = (stack as Schemas['StackBox']).parentid!;
      const moved = await owner.api.POST('/projects/{projectid}/files/{fileid}', { params: { path: { projectid, fileid: heldFolder } }, body: { removeids: [stackid] } });
      expect(moved.error).toBeUndefined();
      expect((await owner.api.GET('/me/held-files')).data).toEqual([]);
      expect((await owner.api.GET('/me/inbox')).data).toEqual({ openComments: 0, heldFiles: 0 });
    });

    it('refuses unknown query parameters and a bad status with 400, and no token with 401', async () => {
      const { owner } = await setup();
      expect((await t.fetch('/me/comments?status=new', { token: owner.token })).status).toBe(400);
      expect((await t.fetch('/me/inbox?all=1', { token: owner.token })).status).toBe(400);
      expect((await t.fetch('/me/held-files?limit=0', { token: owner.token })).status).toBe(400);
      expect((await t.fetch('/me/comments')).status).toBe(401);
    });
  });

  describe('exportComments', () => {
    /** The comments of one file: a range, a point, one about the whole version, a reply, and a listener's with every trap. */
    async function commented() {
      const s = await setup();
      const { owner, projectid, v2, playerid } = s;
      await owner.api.POST('/me', { body: { name: 'Sam' } });
      const late = await comment(owner.api, projectid, v2, { message: 'Outro\nfades too early', audioTimestamp: 3725.25 });
      const range = await comment(owner.api, projectid, v2, { message: 'Snare too loud, "really"', audioTimestamp: 42.5, audioTimestampEnd: 61 });
      const whole = await comment(owner.api, projectid, v2, { message: 'Love the mix overall' });
      const cookie = await listenerSession(playerid, '=HYPERLINK("x")');
      const listener = await asListener(cookie, playerid, v2, { message: '-3 dB\ton the\u0007 vocal\r\nplease\u202e', audioTimestamp: 7 });
      const reply = await comment(owner.api, projectid, v2, { message: '@Alex done', parentid: range.id });
      await owner.api.POST('/projects/{projectid}/files/{fileid}/comments/{commentid}', { params: { path: { projectid, fileid: v2, commentid: range.id } }, body: { completed: true } });
      return { ...s, late, range, whole, listener, reply };
    }

    async function exported(token: string, projectid: string, fileid: string, format: string) {
      const response = await t.fetch(`/projects/${projectid}/files/${fileid}/comments/export?format=${format}`, { token });
      expect(response.status, await response.clone().text()).toBe(200);
      return { type: response.headers.get('content-type'), disposition: response.headers.get('content-disposition'), body: await response.text() };
    }

    it('text: one line per comment in timeline order, replies indented, messages on one line', async () => {
      const { viewer, projectid, v2 } = await commented();
      const { type, disposition, body } = await exported(viewer.token, projectid, v2, 'text');
      expect(type).toBe('text/plain; charset=utf-8');
      expect(disposition).toBe('attachment; filename="mix v2-comments.txt"');
      expect(body.split('\n')).toEqual([
        '[0:07] =HYPERLINK("x") (guest): -3 dB on the vocal please',
        '[0:42-1:01] Sam: Snare too loud, "really"',
        '    Sam: @Alex done',
        '[1:02:05] Sam: Outro fades too early',
        'Sam: Love the mix overall',
        '',
      ]);
    });

    it('csv: RFC 4180 with the header, every comment, replies at their parent\'s time, formulas guarded', async () => {
      const { owner, projectid, v2, range, whole, listener, reply, late } = await commented();
      const { type, disposition, body } = await exported(owner.token, projectid, v2, 'csv');
      expect(type).toBe('text/csv; charset=utf-8');
      expect(disposition).toBe('attachment; filename="mix v2-comments.csv"');
      const [header, ...rows] = parseCsv(body);
      expect(header).toEqual(['time', 'end', 'author', 'message', 'done', 'created']);
      const iso = (c: Comment) => new Date(c.timeCreated).toISOString();
      expect(rows).toEqual([
        ['7', '', `'=HYPERLINK("x") (guest)`, `'-3 dB on the vocal please`, 'false', iso(listener)],
        ['42.5', '61', 'Sam', 'Snare too loud, "really"', 'true', iso(range)],
        ['42.5', '61', 'Sam', `'@Alex done`, 'false', iso(reply)],
        ['3725.25', '', 'Sam', 'Outro fades too early', 'false', iso(late)],
        ['', '', 'Sam', 'Love the mix overall', 'false', iso(whole)],
      ]);
    });

    it('audacity: a label track, start, end and label split by tabs, only the timed top-level comments', async () => {
      const { owner, projectid, v2 } = await commented();
      const { type, disposition, body } = await exported(owner.token, projectid, v2, 'audacity');
      expect(type).toBe('text/plain; charset=utf-8');
      expect(disposition).toBe('attachment; filename="mix v2-labels.txt"');
      expect(body.endsWith('\n')).toBe(true);
      const labels = body.slice(0, -1).split('\n').map((line) => line.split('\t'));
      expect(labels).toEqual([
        ['7.000000', '7.000000', '=HYPERLINK("x") (guest): -3 dB on the vocal please'],
        ['42.500000', '61.000000', 'Sam: Snare too loud, "really"'],
        ['3725.250000', '3725.250000', 'Sam: Outro fades too early'],
      ]);
    });

    it('reaper: markers for points and regions for ranges, numbered apart, in seconds', async () => {
      const { owner, projectid, v2 } = await commented();
      const { type, disposition, body } = await exported(owner.token, projectid, v2, 'reaper');
      expect(type).toBe('text/csv; charset=utf-8');
      expect(disposition).toBe('attachment; filename="mix v2-markers.csv"');
      expect(parseCsv(body)).toEqual([
        ['#', 'Name', 'Start', 'End', 'Length'],
        ['M1', `'=HYPERLINK("x") (guest): -3 dB on the vocal please`, '7.000000', '', ''],
        ['R1', 'Sam: Snare too loud, "really"', '42.500000', '61.000000', '18.500000'],
        ['M2', 'Sam: Outro fades too early', '3725.250000', '', ''],
      ]);
      // A name with a quote or a comma is quoted; one without is not.
      expect(body).toContain('R1,"Sam: Snare too loud, ""really""",42.500000');
      expect(body).toContain('M2,Sam: Outro fades too early,3725.250000,,\r\n');
    });

    it('answers an empty export for a file without comments; refuses a missing or unknown format, a stack and a stranger', async () => {
      const { owner, stranger, projectid, stackid, v1 } = await setup();
      expect((await exported(owner.token, projectid, v1, 'csv')).body).toBe('"time","end","author","message","done","created"\r\n');
      expect((await exported(owner.token, projectid, v1, 'audacity')).body).toBe('');
      const at = (fileid: string, query: string, token = owner.token) => t.fetch(`/projects/${projectid}/files/${fileid}/comments/export${query}`, { token });
      expect((await at(v1, '')).status).toBe(400);
      expect((await at(v1, '?format=pdf')).status).toBe(400);
      expect((await at(stackid, '?format=text')).status).toBe(404);
      expect((await at(v1, '?format=text', stranger.token)).status).toBe(404);
      // The concrete path is matched before the templated …/comments/{commentid} (OpenAPI 3.1 §4.8.8), which takes POST.
      const post = await t.fetch(`/projects/${projectid}/files/${v1}/comments/export`, { method: 'POST', token: owner.token });
      expect(post.status).toBe(405);
      expect(post.headers.get('allow')).toBe('GET, HEAD');
    });
  });
});
