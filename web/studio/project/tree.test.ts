/**
 * The project page's tree as rows: a stack of one version shows as its
 * file, a stack of several opens on its versions, trashed boxes leave the
 * tree for the Trash (a trashed folder standing for its contents), hidden
 * boxes the list left out are named, and sorting keeps folders first.
 */
import { describe, expect, it } from 'vitest';
import type { Box, FileBox } from '../api.ts';
import { ancestorsOf, boxesOf, folderChoices, isInside, missingIds, sortSiblings, trashRows, visibleRows } from './tree.ts';

const file = (id: string, name: string, parentid?: string, extra: Partial<FileBox> = {}): FileBox => ({
  id,
  object: 'file',
  name,
  color: '#64748b',
  timeCreated: 1,
  trashed: false,
  status: 'ready',
  size: 10,
  mimeType: 'audio/wav',
  ...(parentid ? { parentid } : {}),
  ...extra,
});
const stack = (id: string, name: string, children: string[], parentid?: string, trashed = false): Box => ({
  id,
  object: 'stack',
  name,
  color: '#64748b',
  timeCreated: 1,
  trashed,
  hidden: false,
  children: children.map((child) => ({ id: child, name: child })),
  ...(parentid ? { parentid } : {}),
});
const folder = (id: string, name: string, children: string[], parentid?: string, trashed = false): Box => ({
  id,
  object: 'folder',
  name,
  color: '#64748b',
  timeCreated: 1,
  trashed,
  hidden: false,
  children: children.map((child) => ({ id: child, name: child })),
  ...(parentid ? { parentid } : {}),
});

describe('the project tree', () => {
  const list: Box[] = [
    folder('mixes', 'Mixes', ['s-old']),
    stack('s-night', 'Night Drive', ['f-night', 'f-night2']),
    stack('s-dawn', 'Dawn', ['f-dawn']),
    stack('s-old', 'Old', ['f-old'], 'mixes'),
    file('f-night', 'Night Drive.wav', 's-night', { duration: 200 }),
    file('f-night2', 'Night Drive v2.wav', 's-night', { duration: 210 }),
    file('f-dawn', 'Dawn.wav', 's-dawn', { duration: 90 }),
    file('f-old', 'Old.wav', 's-old'),
  ];

  it('shows a stack of one version as its file, and a stack of two as a stack that opens on its versions', () => {
    const boxes = boxesOf(list);
    const closed = visibleRows(boxes, new Set(), undefined);
    expect(closed.map((row) => [row.kind, row.key, row.file?.name ?? row.box.name])).toEqual([
      ['folder', 'mixes', 'Mixes'],
      ['stack', 's-night', 'Night Drive'],
      ['file', 's-dawn', 'Dawn.wav'],
    ]);
    const open = visibleRows(boxes, new Set(['s-night', 'mixes']), undefined);
    expect(open.map((row) => [row.key, row.depth, row.version?.index])).toEqual([
      ['mixes', 0, undefined],
      ['s-old', 1, undefined],
      ['s-night', 0, undefined],
      ['f-night', 1, 0],
      ['f-night2', 1, 1],
      ['s-dawn', 0, undefined],
    ]);
  });

  it('sorts by a criterion with folders first, the newest version standing for its stack, and back to front when descending', () => {
    const boxes = boxesOf(list);
    const top = boxes.top.map((id) => boxes.byId.get(id)!);
    expect(sortSiblings(boxes, top, { criterion: 'duration', ascending: true }).map((box) => box.id)).toEqual(['mixes', 's-dawn', 's-night']);
    expect(sortSiblings(boxes, top, { criterion: 'duration', ascending: false }).map((box) => box.id)).toEqual(['mixes', 's-night', 's-dawn']);
    expect(sortSiblings(boxes, top, { criterion: 'name', ascending: true }).map((box) => box.id)).toEqual(['mixes', 's-dawn', 's-night']);
  });

  it('leaves trashed boxes to the Trash, where a trashed folder stands for its contents', () => {
    const trashed = list.map((box) => (box.id === 'mixes' || box.id === 's-old' || box.id === 'f-old' || box.id === 'f-dawn' ? { ...box, trashed: true } : box));
    const boxes = boxesOf(trashed);
    expect(visibleRows(boxes, new Set(['mixes']), undefined).map((row) => row.key)).toEqual(['s-night']);
    expect(trashRows(boxes).map((row) => row.key).sort()).toEqual(['f-dawn', 'mixes']);
  });

  it('names the boxes the list left out (hidden ones), and knows what holds what', () => {
    const boxes = boxesOf(list.filter((box) => box.id !== 's-old'));
    expect(missingIds(boxes)).toEqual(['s-old']);
    const whole = boxesOf([...list, folder('inner', 'Inner', [], 'mixes')]);
    expect(ancestorsOf(whole, 'f-old')).toEqual(['mixes', 's-old']);
    expect(isInside(whole, 'inner', 'mixes')).toBe(true);
    expect(isInside(whole, 'mixes', 'inner')).toBe(false);
    expect(folderChoices(whole)).toEqual([
      { id: 'mixes', path: 'Mixes' },
      { id: 'inner', path: 'Mixes / Inner' },
    ]);
  });
});
