/**
 * A project at /projects/{projectid}, its heading the project's name: its
 * files, folders and stacks as a tree (tree.ts, rows.tsx), uploads by the
 * "Upload files" input or by dropping files anywhere on the page
 * (uploads.ts, transport.ts), organising (select, Stack versions, New
 * folder, each row's Rename, Move to…, Version name, Hide, Move to trash; a
 * Trash view with Restore; versions reordered), playing a file with its
 * waveform (player-panel.tsx), sorting, artwork and sharing.
 *
 * Deep links (the inbox's and the mails'): `?file={fileid}&t={seconds}`
 * opens the folder or stack holding the file, scrolls its row into view and
 * makes it ready to play from t seconds; the user's click starts it.
 */
import { useEffect, useMemo, useRef, useState } from 'preact/hooks';
import { answer, type Answer, type Box, type FileBox, early, type Project, type Studio } from '../api.ts';
import { useSession } from '../session.ts';
import { ShareDialog, type ShareTarget } from '../share/share-dialog.tsx';
import { Dialog, FormError, formatBytes } from '../ui.tsx';
import { MoveForm, NameForm } from './dialogs.tsx';
import { PlayerPanel, type Playing } from './player-panel.tsx';
import { type Action, TrashRow, TreeRow } from './rows.tsx';
import { tusTransport } from './tus-transport.ts';
import {
  ancestorsOf,
  boxesOf,
  CRITERIA,
  type Criterion,
  displayName,
  folderChoices,
  isInside,
  isProcessing,
  missingIds,
  type Boxes,
  type Row,
  type SortBy,
  trashRows,
  versionsOf,
  visibleRows,
} from './tree.ts';
import { UploadList } from './upload-list.tsx';
import { type WindowHandle, WindowedList } from '../windowed-list.tsx';
import { UploadQueue } from './uploads.ts';
import './project.css';

/** How often the page reads again the files still being analysed. */
const POLL_MS = 1500;
/** A row's height before one is measured (the tree measures its rows once drawn, windowed-list.tsx). */
const ROW_ESTIMATE_PX = 56;
/** Above this many files in analysis, the page reads the whole list again instead of each file. */
const POLL_ONE_BY_ONE = 25;

type Dialogs =
  | { kind: 'folder' }
  | { kind: 'rename'; row: Row }
  | { kind: 'move'; row: Row }
  | { kind: 'version-name'; row: Row }
  | { kind: 'share'; target: ShareTarget }
  | null;


const ok = <T,>(data: T): Answer<T> => ({ ok: true, data });

/**
 * The page's reads: the project, its boxes, and its folders (hidden ones too). Each answers the one the studio
 * started as it booted on this page (main.tsx, api.ts `early`), the first time; a new read after that.
 */
export function projectReads(studio: Studio, projectid: string) {
  const path = { projectid };
  const read = <T,>(key: string, start: () => Promise<T>) => ({ key: `${key} ${projectid}`, start, read: () => early(studio, `${key} ${projectid}`, start) });
  return {
    project: read('project', () => answer(studio.client.GET('/projects/{projectid}', { params: { path } }))),
    all: read('all', () => answer(studio.client.GET('/projects/{projectid}/all', { params: { path } }))),
    folders: read('folders', () => answer(studio.client.GET('/projects/{projectid}/folders', { params: { path } }))),
  };
}
const stem = (name: string) => name.replace(/\.[^.\s]{1,8}$/, '') || name;

export function ProjectPage({ projectid }: { projectid: string }) {
  const { studio, user } = useSession();
  const [project, setProject] = useState<Project | null>(null);
  const [boxes, setBoxes] = useState<Boxes | null>(null);
  const [error, setError] = useState<string>();
  const [notice, setNotice] = useState<string>();
  const [open, setOpen] = useState<Set<string>>(() => new Set());
  const [view, setView] = useState<'files' | 'trash'>('files');
  const [selected, setSelected] = useState<Map<string, Row>>(() => new Map());
  const [dialog, setDialogState] = useState<Dialogs>(null);
  /** Where the focus goes back to when a dialog closes: what opened it (a row's actions button, a toolbar button). */
  const opener = useRef<HTMLElement | null>(null);
  const setDialog = (next: Dialogs) => {
    if (next) opener.current = document.activeElement as HTMLElement | null;
    setDialogState(next);
    if (!next) {
      const back = opener.current;
      // A row's action button is gone with its panel: its row's actions button takes the focus.
      requestAnimationFrame(() => {
        if (back?.isConnected) back.focus();
        else (next === null && dialogRowKey.current ? document.querySelector<HTMLElement>(`#row-${CSS.escape(dialogRowKey.current)} .row-actions > button`) : null)?.focus();
      });
    }
  };
  const dialogRowKey = useRef<string>();
  const [playing, setPlaying] = useState<Playing | null>(null);
  const [highlight, setHighlight] = useState<string>();
  const [dragging, setDragging] = useState(false);
  /** The folder or stack row the files are over while dragged: they land in it (a folder) or as its newest versions (a stack). */
  const [dropInto, setDropInto] = useState<string | null>(null);
  const [uploads, setUploads] = useState<UploadQueue['items']>([]);
  const boxesRef = useRef<Boxes | null>(null);
  boxesRef.current = boxes;
  const tree = useRef<WindowHandle>();
  const deepLink = useRef(new URL(window.location.href).searchParams);
  const path = { projectid };

  /** Reads every box again: the list, the folders (hidden ones too), and the hidden boxes the tree names. */
  const reload = async () => {
    const reads = projectReads(studio, projectid);
    const [all, folders] = await Promise.all([reads.all.read(), reads.folders.read()]);
    if (!all.ok) return setError(all.refusal.detail);
    const list: Box[] = [...all.data];
    const known = new Set(list.map((box) => box.id));
    if (folders.ok) for (const folder of folders.data) if (!known.has(folder.id)) list.push(folder);
    let tree = boxesOf(list);
    // Hidden boxes are left out of the list (boxes.yaml: "Hidden boxes are left out of List all files"): read each one the tree names.
    for (let round = 0; round < 3; round++) {
      const missing = missingIds(tree);
      if (missing.length === 0) break;
      const found = await Promise.all(missing.map((fileid) => answer(studio.client.GET('/projects/{projectid}/files/{fileid}', { params: { path: { projectid, fileid } } }))));
      for (const one of found) if (one.ok) list.push(one.data);
      tree = boxesOf(list);
    }
    setBoxes(tree);
  };

  const reloadProject = async () => {
    const read = await projectReads(studio, projectid).project.read();
    if (read.ok) setProject(read.data);
    else setError(read.refusal.detail);
    return read;
  };

  // Reloads after an upload lands, at most one at a time, so ten files finishing together read the list once or twice.
  const reloading = useRef<Promise<void> | null>(null);
  const again = useRef(false);
  const reloadSoon = () => {
    if (reloading.current) {
      again.current = true;
      return;
    }
    reloading.current = reload().finally(() => {
      reloading.current = null;
      if (again.current) {
        again.current = false;
        reloadSoon();
      }
    });
  };

  const queue = useMemo(
    () =>
      new UploadQueue(
        projectid,
        tusTransport(studio),
        // The account's preference (User.autoStack) when the server has one; the server applies it anyway when it is not sent.
        () => (user as { autoStack?: boolean }).autoStack,
        // The project's size and last change count the new file too.
        () => {
          reloadSoon();
          void reloadProject();
        },
      ),
    [projectid],
  );
  useEffect(() => {
    const off = queue.subscribe(() => setUploads(queue.items));
    return () => {
      off();
      queue.stop();
    };
  }, [queue]);

  // The project and its boxes are read side by side: a project of 10,000 boxes waits for one answer, not two in turn.
  useEffect(() => {
    void reloadProject().then((read) => {
      if (read.ok) document.title = `${read.data.name} · Audio Share`;
    });
    void reload();
  }, [projectid]);

  // Files in analysis are read again until they are done. The uploads count only by the files they stored, so
  // their progress does not put the next reading off.
  const stored = uploads
    .filter((item) => item.boxid)
    .map((item) => item.boxid)
    .join(' ');
  useEffect(() => {
    if (!boxes) return;
    const waiting = [...boxes.byId.values()].filter((box): box is FileBox => box.object === 'file' && isProcessing(box));
    const arriving = [...boxes.byId.values()].some((box) => box.object === 'file' && box.status === 'awaiting-upload' && stored.includes(box.id));
    if (waiting.length === 0 && !arriving) return;
    const timer = setTimeout(async () => {
      if (waiting.length > POLL_ONE_BY_ONE || arriving) return reloadSoon();
      const read = await Promise.all(waiting.map((file) => answer(studio.client.GET('/projects/{projectid}/files/{fileid}', { params: { path: { projectid, fileid: file.id } } }))));
      const current = boxesRef.current;
      if (!current) return;
      const byId = new Map(current.byId);
      for (const one of read) if (one.ok) byId.set(one.data.id, one.data);
      setBoxes({ byId, top: current.top });
    }, POLL_MS);
    return () => clearTimeout(timer);
  }, [boxes, stored]);

  // A deep link: open what holds the file, show its row, and make it ready to play from t.
  useEffect(() => {
    const fileid = deepLink.current.get('file');
    if (!boxes || !fileid) return;
    const file = boxes.byId.get(fileid);
    deepLink.current = new URLSearchParams();
    if (file?.object !== 'file') return setNotice('The file this link names is not in this project any more.');
    const t = Math.max(0, Number(new URL(window.location.href).searchParams.get('t')) || 0);
    if (file.trashed) setView('trash');
    setOpen((before) => new Set([...before, ...ancestorsOf(boxes, fileid)]));
    const stack = file.parentid ? boxes.byId.get(file.parentid) : undefined;
    setHighlight(stack?.object === 'stack' && versionsOf(boxes, stack).length === 1 ? stack.id : fileid);
    setPlaying({ file, versions: stack?.object === 'stack' ? versionsOf(boxes, stack) : [file], time: t, play: false, seq: Date.now() });
  }, [boxes]);

  const rows = useMemo(() => (boxes ? visibleRows(boxes, open, project?.sortBy) : []), [boxes, open, project?.sortBy]);
  const trash = useMemo(() => (boxes ? trashRows(boxes) : []), [boxes]);

  // The highlighted row (a deep link's) is drawn and scrolled to, once: a poll that redraws the list leaves the scroll alone.
  const scrolledTo = useRef<string>();
  useEffect(() => {
    if (!highlight || scrolledTo.current === highlight || !tree.current) return;
    const index = rows.findIndex((row) => row.key === highlight);
    if (index < 0) return;
    scrolledTo.current = highlight;
    tree.current.reveal(index);
  }, [highlight, rows, view]);

  /**
   * Whether the caller may change this project, its boxes and its players: the server's answer (`abilities.write`),
   * not a reading of `role`, so the page offers exactly what the API will then allow. Until the project arrives, nothing.
   */
  const canWrite = project?.abilities.write ?? false;

  // The whole page is a drop zone for files, for those who may upload.
  useEffect(() => {
    let depth = 0;
    const hasFiles = (event: DragEvent) => [...(event.dataTransfer?.types ?? [])].includes('Files');
    const rowUnder = (event: DragEvent) =>
      event.target instanceof Element ? (event.target.closest('li.tree-row.kind-folder, li.tree-row.kind-stack')?.getAttribute('data-boxid') ?? null) : null;
    // Someone who may only read drops nothing in: the drop is still taken, or the browser would leave the studio to open the file.
    if (!canWrite) {
      const refuse = (event: DragEvent) => {
        if (!hasFiles(event)) return;
        event.preventDefault();
        if (event.dataTransfer) event.dataTransfer.dropEffect = 'none';
      };
      document.addEventListener('dragover', refuse);
      document.addEventListener('drop', refuse);
      return () => {
        document.removeEventListener('dragover', refuse);
        document.removeEventListener('drop', refuse);
      };
    }
    const enter = (event: DragEvent) => {
      if (!hasFiles(event)) return;
      depth += 1;
      setDragging(true);
    };
    const over = (event: DragEvent) => {
      if (!hasFiles(event)) return;
      event.preventDefault();
      if (event.dataTransfer) event.dataTransfer.dropEffect = 'copy';
      setDropInto(rowUnder(event));
    };
    const leave = () => {
      depth = Math.max(0, depth - 1);
      if (depth === 0) {
        setDragging(false);
        setDropInto(null);
      }
    };
    const drop = (event: DragEvent) => {
      depth = 0;
      setDragging(false);
      setDropInto(null);
      if (event.defaultPrevented || !event.dataTransfer?.files.length) return;
      event.preventDefault();
      queue.add(event.dataTransfer.files, rowUnder(event) ?? undefined);
    };
    document.addEventListener('dragenter', enter);
    document.addEventListener('dragover', over);
    document.addEventListener('dragleave', leave);
    document.addEventListener('drop', drop);
    return () => {
      document.removeEventListener('dragenter', enter);
      document.removeEventListener('dragover', over);
      document.removeEventListener('dragleave', leave);
      document.removeEventListener('drop', drop);
    };
  }, [queue, canWrite]);

  // Leaving the page while files travel would stop them: the browser asks first.
  useEffect(() => {
    const ask = (event: BeforeUnloadEvent) => {
      if (queue.active) event.preventDefault();
    };
    window.addEventListener('beforeunload', ask);
    return () => window.removeEventListener('beforeunload', ask);
  }, [queue]);

  if (error && !project) {
    return (
      <>
        <h1>Project</h1>
        <FormError id="project-error" message={error} />
      </>
    );
  }
  if (!project || !boxes) {
    return (
      <p class="meta" aria-live="polite">
        Loading the project…
      </p>
    );
  }

  const update = (fileid: string, body: Record<string, unknown>) =>
    answer(studio.client.POST('/projects/{projectid}/files/{fileid}', { params: { path: { projectid, fileid } }, body: body as never }));

  /** Runs a change, then reads the tree again; a refusal is said above the list. */
  const change = async (run: () => Promise<Answer<unknown>>): Promise<Answer<unknown>> => {
    const done = await run();
    if (done.ok) {
      setError(undefined);
      await reload();
    } else setError(done.refusal.detail);
    return done;
  };

  const nameOf = (row: Row) => (row.kind === 'file' && row.file ? row.file.name : displayName(boxes, row.box));

  const onAction = (action: Action, row: Row) => {
    const box = row.box;
    switch (action) {
      case 'rename':
      case 'move':
      case 'version-name':
        dialogRowKey.current = row.key;
        return setDialog({ kind: action, row });
      case 'share':
        return setDialog({ kind: 'share', target: { projectid, folderid: box.id } });
      case 'hide':
      case 'show':
        return void change(() => update(box.id, { hidden: action === 'hide' }));
      case 'trash':
        return void change(async () => {
          const done = await update(box.id, { trashed: true });
          if (done.ok) setNotice(`${nameOf(row)} is in the trash.`);
          return done;
        });
      case 'up':
      case 'down': {
        // A stack's versions in a new order, oldest first: addids puts each, in order, at the end (files.yaml, updateFile).
        const stack = row.stack!;
        const ids = stack.children.map((child) => child.id);
        const at = ids.indexOf(box.id);
        const to = action === 'up' ? at - 1 : at + 1;
        if (at < 0 || to < 0 || to >= ids.length) return;
        [ids[at], ids[to]] = [ids[to], ids[at]];
        return void change(() => update(stack.id, { addids: ids }));
      }
      case 'restore':
        return;
    }
  };

  const restore = (row: Row) =>
    void change(async () => {
      const done = await update(row.box.id, { trashed: false });
      if (done.ok) setNotice(`${nameOf(row)} is back.`);
      return done;
    });

  const toggle = (row: Row) =>
    setOpen((before) => {
      const next = new Set(before);
      if (next.has(row.key)) next.delete(row.key);
      else next.add(row.key);
      return next;
    });

  const select = (row: Row, on: boolean) =>
    setSelected((before) => {
      const next = new Map(before);
      if (on) next.set(row.key, row);
      else next.delete(row.key);
      return next;
    });

  const play = (row: Row) => {
    const file = row.file!;
    const versions = row.stack ? versionsOf(boxes, row.stack) : [file];
    setPlaying({ file, versions, time: 0, play: true, seq: Date.now() });
  };

  const selectedRows = [...selected.values()];
  const selectedFiles = selectedRows.filter((row) => row.kind === 'file' && row.file).map((row) => row.file!);
  const stackVersions = () =>
    void change(async () => {
      const first = selectedFiles[0];
      const done = await answer(studio.client.POST('/projects/{projectid}/stacks', { params: { path }, body: { name: stem(first.name), childids: selectedFiles.map((file) => file.id) } }));
      if (done.ok) {
        setSelected(new Map());
        setOpen((before) => new Set([...before, done.data.id]));
      }
      return done;
    });

  const setSort = async (sortBy: SortBy) => {
    setProject({ ...project, sortBy });
    const saved = await answer(studio.client.POST('/projects/{projectid}', { params: { path }, body: { sortBy } }));
    if (saved.ok) setProject(saved.data);
    else setError(saved.refusal.detail);
  };

  const setArtwork = async (image: File) => {
    setError(undefined);
    const asked = await answer(studio.client.POST('/projects/{projectid}/artwork', { params: { path }, body: { name: image.name, mimeType: image.type || 'application/octet-stream', size: image.size } }));
    if (!asked.ok) return setError(asked.refusal.detail);
    try {
      const put = await fetch(asked.data.url, { method: 'PUT', headers: asked.data.headers as Record<string, string>, body: image });
      if (!put.ok) {
        const problem = (await put.json().catch(() => ({}))) as { detail?: string };
        return setError(problem.detail ?? `The artwork was refused (${put.status}).`);
      }
    } catch {
      return setError('The connection was lost. Check it, then choose the image again.');
    }
    await reloadProject();
    setNotice('The artwork is set.');
  };

  const sortBy = project.sortBy ?? { criterion: 'custom' as Criterion, ascending: true };
  const dialogRow = dialog && 'row' in dialog ? dialog.row : undefined;
  const playingRowKey = playing?.file.id;

  return (
    <div class={`project-page${dragging ? ' dropping' : ''}`}>
      <div class="page-head project-head">
        <Artwork project={project} onImage={canWrite ? setArtwork : undefined} />
        <div class="project-title">
          <h1>{project.name}</h1>
          <p class="meta">
            {project.role === 'owner' ? 'Yours' : `Shared with you · ${project.role}`}
            {(project as Project & { size?: number }).size !== undefined ? ` · ${formatBytes((project as Project & { size: number }).size)}` : ''}
          </p>
        </div>
        {canWrite ? (
          <div class="actions">
            <button type="button" onClick={() => setDialog({ kind: 'share', target: { projectid } })}>
              Share
            </button>
          </div>
        ) : null}
      </div>

      {canWrite ? (
        <div class="toolbar project-toolbar">
          <span class="file-button">
            <input
              id="upload-files"
              type="file"
              multiple
              class="visually-hidden-input"
              onChange={(event) => {
                const input = event.currentTarget;
                if (input.files?.length) queue.add([...input.files]);
                input.value = '';
              }}
            />
            <label for="upload-files" class="button-like">
              Upload files
            </label>
          </span>
          <button type="button" class="secondary" onClick={() => setDialog({ kind: 'folder' })}>
            New folder
          </button>
          <label class="sort">
            <span>Sort by</span>
            <select value={sortBy.criterion ?? 'custom'} onChange={(event) => void setSort({ ...sortBy, criterion: event.currentTarget.value as Criterion })}>
              {CRITERIA.map(([value, label]) => (
                <option key={value} value={value}>
                  {label}
                </option>
              ))}
            </select>
          </label>
          <label class="sort">
            <span>Order</span>
            <select value={sortBy.ascending === false ? 'descending' : 'ascending'} onChange={(event) => void setSort({ ...sortBy, ascending: event.currentTarget.value === 'ascending' })}>
              <option value="ascending">Ascending</option>
              <option value="descending">Descending</option>
            </select>
          </label>
        </div>
      ) : null}
      {canWrite ? (
        <p class="drop-hint meta" aria-hidden={!dragging}>
          {dragging ? dropHint(dropInto ? boxes?.byId.get(dropInto) : undefined) : 'Drop audio anywhere on this page, or onto a folder or stack, to upload it.'}
        </p>
      ) : (
        <p class="meta">You may only read this project. To upload or change anything in it, ask its owner for the editor role.</p>
      )}

      <UploadList items={uploads} queue={queue} />

      <FormError id="project-error" message={error} />
      <p class="project-notice" role="status">
        {notice ?? ''}
      </p>

      {playing ? <PlayerPanel projectid={projectid} playing={playing} title={playing.versions.length > 1 && playing.file.parentid ? (boxes.byId.get(playing.file.parentid)?.name ?? playing.file.name) : playing.file.name} /> : null}

      <div class="view-tabs">
        <fieldset class="chips">
          <legend class="visually-hidden">Show</legend>
          <button type="button" class="chip" aria-pressed={view === 'files'} onClick={() => setView('files')}>
            Files
          </button>
          <button type="button" class="chip" aria-pressed={view === 'trash'} onClick={() => setView('trash')}>
            Trash{trash.length ? ` (${trash.length})` : ''}
          </button>
        </fieldset>
        {view === 'files' && selectedRows.length > 0 ? (
          <div class="selection" role="toolbar" aria-label="Selection">
            <span class="meta">{selectedRows.length} selected</span>
            {canWrite ? (
              <>
                <button type="button" class="small" disabled={selectedFiles.length < 2 || selectedFiles.length !== selectedRows.length} onClick={stackVersions}>
                  Stack versions
                </button>
                <button type="button" class="small secondary" onClick={() => setDialog({ kind: 'share', target: { projectid, boxids: selectedRows.map((row) => row.box.id) } })}>
                  Share
                </button>
              </>
            ) : null}
            <button type="button" class="small secondary" onClick={() => setSelected(new Map())}>
              Clear selection
            </button>
          </div>
        ) : null}
      </div>

      {view === 'files' ? (
        rows.length === 0 ? (
          <p class="empty">{canWrite ? 'No files yet. Press Upload files, or drop audio anywhere on this page.' : 'No files yet.'}</p>
        ) : (
          <WindowedList
            items={rows}
            keyOf={(row) => row.key}
            estimate={ROW_ESTIMATE_PX}
            handle={tree}
            class="tree"
            aria-label="Files"
            render={(row, _index, position) => (
              <TreeRow
                row={row}
                position={position}
                name={nameOf(row)}
                selected={selected.has(row.key)}
                open={open.has(row.key)}
                highlighted={highlight === row.key}
                dropTarget={dropInto !== null && dropInto === row.box.id}
                playing={!!row.file && row.file.id === playingRowKey}
                apiBase={studio.apiBase}
                projectid={projectid}
                onSelect={select}
                onToggle={toggle}
                onPlay={play}
                onAction={onAction}
                canWrite={canWrite}
              />
            )}
          />
        )
      ) : trash.length === 0 ? (
        <p class="empty">The trash is empty.</p>
      ) : (
        <ul class="tree" aria-label="Trash">
          {trash.map((row) => (
            <TrashRow key={row.key} row={row} name={nameOf(row)} onRestore={canWrite ? restore : undefined} />
          ))}
        </ul>
      )}

      <Dialog title="New folder" open={dialog?.kind === 'folder'} onClose={() => setDialog(null)}>
        <NameForm
          id="folder-name"
          label="Folder name"
          action="Create"
          maxLength={255}
          onClose={() => setDialog(null)}
          submit={(name) => change(() => answer(studio.client.POST('/projects/{projectid}/folders', { params: { path }, body: { name } })))}
        />
      </Dialog>
      <Dialog title="Rename" open={dialog?.kind === 'rename'} onClose={() => setDialog(null)}>
        {dialogRow ? (
          <NameForm
            id="rename-name"
            label="Name"
            initial={nameOf(dialogRow)}
            action="Rename"
            maxLength={255}
            onClose={() => setDialog(null)}
            submit={(name) =>
              change(async () => {
                // A stack of one version shows as its file: the file takes the name, and the stack the name without its extension.
                if (dialogRow.kind === 'file' && dialogRow.file && dialogRow.stack && !dialogRow.version) {
                  const file = await update(dialogRow.file.id, { name });
                  return file.ok ? update(dialogRow.stack.id, { name: stem(name) }) : file;
                }
                return update(dialogRow.kind === 'file' && dialogRow.file ? dialogRow.file.id : dialogRow.box.id, { name });
              })
            }
          />
        ) : null}
      </Dialog>
      <Dialog title="Version name" open={dialog?.kind === 'version-name'} onClose={() => setDialog(null)}>
        {dialogRow?.file ? (
          <NameForm
            id="version-name"
            label="Version name"
            initial={dialogRow.file.versionName ?? ''}
            action="Save"
            maxLength={100}
            allowEmpty
            onClose={() => setDialog(null)}
            submit={(versionName) => change(() => update(dialogRow.file!.id, { versionName }))}
          />
        ) : null}
      </Dialog>
      <Dialog title="Move to…" open={dialog?.kind === 'move'} onClose={() => setDialog(null)}>
        {dialogRow ? (
          <MoveForm
            folders={folderChoices(boxes).filter((folder) => !isInside(boxes, folder.id, dialogRow.box.id))}
            current={dialogRow.box.parentid && boxes.byId.get(dialogRow.box.parentid)?.object === 'folder' ? dialogRow.box.parentid : undefined}
            onClose={() => setDialog(null)}
            submit={(folderid) =>
              change(() => {
                const box = dialogRow.box;
                if (folderid) return update(folderid, { addids: [box.id] });
                // To the top level: out of the folder or stack that holds it (removeids moves children to the top level).
                return box.parentid ? update(box.parentid, { removeids: [box.id] }) : Promise.resolve(ok({}));
              })
            }
          />
        ) : null}
      </Dialog>
      <ShareDialog target={dialog?.kind === 'share' ? dialog.target : undefined} open={dialog?.kind === 'share'} onClose={() => setDialog(null)} />
    </div>
  );
}

/** What a drop will do, said while the files are dragged over the page, or over a folder or stack row. */
function dropHint(target: { object: string; name: string } | undefined): string {
  if (target?.object === 'folder') return `Drop the files to upload them into the folder ${target.name}.`;
  if (target?.object === 'stack') return `Drop the files to add them to ${target.name} as its newest versions.`;
  return 'Drop the files to upload them.';
}

/** The artwork in the page head: drop an image on it, or choose one with its button; without `onImage` (the caller may not change the project), only the image. */
function Artwork({ project, onImage }: { project: Project; onImage?: (image: File) => void }) {
  const [over, setOver] = useState(false);
  const ref = useRef<HTMLDivElement>(null);
  const image = (files: FileList | null | undefined) => [...(files ?? [])].find((file) => file.type.startsWith('image/'));
  const take = useRef(onImage);
  take.current = onImage;
  // An image dropped here is the artwork; the page's own drop zone leaves a drop another handler took (defaultPrevented).
  useEffect(() => {
    const box = ref.current!;
    const over = (event: DragEvent) => {
      if (!take.current || ![...(event.dataTransfer?.items ?? [])].some((item) => item.type.startsWith('image/'))) return;
      event.preventDefault();
      setOver(true);
    };
    const leave = () => setOver(false);
    const drop = (event: DragEvent) => {
      setOver(false);
      const file = image(event.dataTransfer?.files);
      if (!file || !take.current) return;
      event.preventDefault();
      take.current(file);
    };
    box.addEventListener('dragover', over);
    box.addEventListener('dragleave', leave);
    box.addEventListener('drop', drop);
    return () => {
      box.removeEventListener('dragover', over);
      box.removeEventListener('dragleave', leave);
      box.removeEventListener('drop', drop);
    };
  }, []);
  return (
    <div ref={ref} class={`project-artwork${over ? ' over' : ''}`}>
      {project.artwork ? <img src={project.artwork.url} alt={`Artwork of ${project.name}`} /> : <span class="artwork-blank" style={{ background: project.color }} />}
      {onImage ? (
        <>
          <input
            id="artwork-file"
            type="file"
            accept="image/jpeg,image/png,image/webp,image/gif"
            class="visually-hidden-input"
            onChange={(event) => {
              const file = image(event.currentTarget.files);
              event.currentTarget.value = '';
              if (file) onImage(file);
            }}
          />
          <label for="artwork-file" class="artwork-choose">
            {project.artwork ? 'Change artwork' : 'Add artwork'}
          </label>
        </>
      ) : null}
    </div>
  );
}

