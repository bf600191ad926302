/**
 * One row of a project's tree: a folder, a stack of versions, or a file.
 * Every row has its checkbox "Select <name>"; a file its "Play <name>", its
 * state ("Processing" until analysed, then duration, loudness, true peak and
 * format); folders and stacks open and close. The row's other actions sit
 * behind one disclosure button per row, each named exactly as the issue
 * names it (Rename, Move to…, Version name, Hide, Move to trash). Those who
 * may not change the project (its `abilities.write`) are offered none of
 * the changes, only what reads: play, open, select, export comments.
 */
import { useEffect, useRef, useState } from 'preact/hooks';
import type { FileBox } from '../api.ts';
import { formatBytes, formatDuration } from '../ui.tsx';
import type { Row } from './tree.ts';
import type { Position } from '../windowed-list.tsx';

export type Action = 'rename' | 'move' | 'version-name' | 'hide' | 'show' | 'trash' | 'restore' | 'share' | 'up' | 'down';

/** The export formats of *Export comments* (GET …/comments/export?format=). */
const EXPORTS: Array<[string, string]> = [
  ['text', 'Text'],
  ['csv', 'CSV'],
  ['audacity', 'Audacity labels'],
  ['reaper', 'REAPER markers'],
];

/** What a file's row says of it: how it is getting on, or what it is once analysed. */
export function fileFacts(file: FileBox): string[] {
  if (file.status === 'awaiting-upload') return ['Uploading…'];
  if (file.status === 'pending' || file.status === 'processing') return ['Processing'];
  if (file.status === 'failed') return [`Could not be analysed${file.statusReason ? `: ${file.statusReason}` : ''}`];
  const facts: string[] = [];
  if (file.duration !== undefined) facts.push(formatDuration(file.duration));
  const audio = file.audio;
  if (audio) {
    facts.push(`${audio.loudness.integratedLufs.toFixed(1)} LUFS`, `${audio.loudness.truePeakDbtp.toFixed(1)} dBTP`);
    const format = [audio.container.split(',')[0].toUpperCase(), `${audio.sampleRate / 1000} kHz`];
    if (audio.bitDepth) format.push(`${audio.bitDepth}-bit`);
    format.push(audio.channels === 1 ? 'mono' : audio.channels === 2 ? 'stereo' : `${audio.channels} ch`);
    facts.push(format.join(' · '));
  } else facts.push(file.mimeType);
  facts.push(formatBytes(file.size));
  return facts;
}

function Actions({ row, name, exportBase, canWrite, onAction }: { row: Row; name: string; exportBase?: string; canWrite: boolean; onAction: (action: Action, row: Row) => void }) {
  const [open, setOpen] = useState(false);
  const ref = useRef<HTMLDivElement>(null);
  const button = useRef<HTMLButtonElement>(null);
  useEffect(() => {
    if (!open) return;
    const outside = (event: Event) => {
      if (!ref.current?.contains(event.target as Node)) setOpen(false);
    };
    const onEscape = (event: KeyboardEvent) => {
      if (event.key !== 'Escape') return;
      setOpen(false);
      button.current?.focus();
    };
    document.addEventListener('pointerdown', outside);
    document.addEventListener('keydown', onEscape);
    return () => {
      document.removeEventListener('pointerdown', outside);
      document.removeEventListener('keydown', onEscape);
    };
  }, [open]);
  const box = row.box;
  const container = box.object !== 'file';
  const hidden = container && 'hidden' in box && box.hidden;
  const act = (action: Action) => () => {
    setOpen(false);
    onAction(action, row);
  };
  const panelId = `actions-${row.key}`;
  return (
    <div class="row-actions" ref={ref}>
      <button ref={button} type="button" class="secondary small icon-button" aria-expanded={open} aria-controls={panelId} aria-label={`Actions for ${name}`} onClick={() => setOpen(!open)}>
        ⋯
      </button>
      {open ? (
        <div class="actions-panel" id={panelId}>
          {canWrite ? (
            <>
              <button type="button" onClick={act('rename')}>
                Rename
              </button>
              <button type="button" onClick={act('move')}>
                Move to…
              </button>
              {row.stack ? (
                <button type="button" onClick={act('version-name')}>
                  Version name
                </button>
              ) : null}
              {row.version ? (
                <>
                  <button type="button" disabled={row.version.index === 0} onClick={act('up')}>
                    Move up
                  </button>
                  <button type="button" disabled={row.version.index === row.version.count - 1} onClick={act('down')}>
                    Move down
                  </button>
                </>
              ) : null}
              {container ? (
                hidden ? (
                  <button type="button" onClick={act('show')}>
                    Unhide
                  </button>
                ) : (
                  <button type="button" onClick={act('hide')}>
                    Hide
                  </button>
                )
              ) : null}
              <button type="button" onClick={act('trash')}>
                Move to trash
              </button>
            </>
          ) : null}
          {exportBase ? (
            <details class="export">
              <summary>Export comments</summary>
              <ul>
                {EXPORTS.map(([format, label]) => (
                  <li key={format}>
                    <a href={`${exportBase}?format=${format}`} download>
                      {label}
                    </a>
                  </li>
                ))}
              </ul>
            </details>
          ) : null}
        </div>
      ) : null}
    </div>
  );
}

export interface RowProps {
  row: Row;
  /** Where the row stands in the whole list, when only some rows are drawn. */
  position: Position;
  name: string;
  selected: boolean;
  open: boolean;
  highlighted: boolean;
  /** Files dragged over the page are over this row: a drop lands them in it. */
  dropTarget?: boolean;
  playing: boolean;
  apiBase: string;
  projectid: string;
  onSelect: (row: Row, selected: boolean) => void;
  onToggle: (row: Row) => void;
  onPlay: (row: Row) => void;
  onAction: (action: Action, row: Row) => void;
  /** The caller may change the project (its `abilities.write`): the row offers its changes and its Share. */
  canWrite: boolean;
}

export function TreeRow({ row, position, name, selected, open, highlighted, dropTarget, playing, apiBase, projectid, onSelect, onToggle, onPlay, onAction, canWrite }: RowProps) {
  const file = row.file;
  const hidden = row.box.object !== 'file' && row.box.hidden;
  const playable = file?.status === 'ready' && !!file.audio;
  const exportBase = file ? `${apiBase}/projects/${encodeURIComponent(projectid)}/files/${encodeURIComponent(file.id)}/comments/export` : undefined;
  return (
    <li
      id={`row-${row.key}`}
      class={`tree-row kind-${row.kind}${highlighted ? ' highlighted' : ''}${dropTarget ? ' drop-target' : ''}${playing ? ' current' : ''}`}
      style={{ '--depth': String(row.depth) }}
      data-boxid={row.box.id}
      data-fileid={file?.id}
      {...position}
    >
      <input type="checkbox" class="select" aria-label={`Select ${name}`} checked={selected} onChange={(event) => onSelect(row, event.currentTarget.checked)} />
      {row.kind === 'file' ? (
        <button type="button" class="icon-button play" aria-label={`Play ${name}`} disabled={!playable} onClick={() => onPlay(row)}>
          ▶
        </button>
      ) : (
        <span class="kind-icon" aria-hidden="true">
          {row.kind === 'folder' ? '▤' : '≡'}
        </span>
      )}
      <div class="row-main">
        {row.kind === 'file' ? (
          <span class="row-name">
            {name}
            {row.version && file?.versionName ? <span class="tag">{file.versionName}</span> : null}
            {row.version && row.version.index === row.version.count - 1 ? <span class="tag">Newest</span> : null}
          </span>
        ) : (
          <button type="button" class="row-name toggle" aria-expanded={open} onClick={() => onToggle(row)}>
            <span aria-hidden="true" class="chevron">
              {open ? '▾' : '▸'}
            </span>{' '}
            {name}
          </button>
        )}
        <span class="row-facts">
          {file
            ? fileFacts(file).map((fact) => <span key={fact}>{fact}</span>)
            : row.kind === 'stack'
              ? [<span key="n">{row.count} versions</span>]
              : [<span key="n">{row.count === 1 ? '1 item' : `${row.count} items`}</span>]}
          {hidden ? <span class="tag">Hidden</span> : null}
        </span>
      </div>
      {canWrite && row.kind === 'folder' ? (
        <button type="button" class="secondary small" onClick={() => onAction('share', row)}>
          Share
        </button>
      ) : null}
      {/* Without changes to offer, a folder or stack has nothing behind the button: none is drawn. */}
      {canWrite || exportBase ? <Actions row={row} name={name} exportBase={exportBase} canWrite={canWrite} onAction={onAction} /> : null}
    </li>
  );
}

/** A row of the trash; Restore only with `onRestore` (the caller may change the project). */
export function TrashRow({ row, name, onRestore }: { row: Row; name: string; onRestore?: (row: Row) => void }) {
  return (
    <li class="tree-row trash-row" data-boxid={row.box.id}>
      <span class="kind-icon" aria-hidden="true">
        {row.kind === 'folder' ? '▤' : row.kind === 'stack' ? '≡' : '♪'}
      </span>
      <div class="row-main">
        <span class="row-name">{name}</span>
        <span class="row-facts">
          <span>{row.kind === 'folder' ? 'Folder' : row.kind === 'stack' ? `Stack of ${row.count} versions` : 'File'}</span>
        </span>
      </div>
      {onRestore ? (
        <button type="button" class="secondary small" onClick={() => onRestore(row)}>
          Restore
        </button>
      ) : null}
    </li>
  );
}
