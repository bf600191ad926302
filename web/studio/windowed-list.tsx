/**
 * A long list drawn a window at a time: only the items on the screen, and a
 * screen's worth above and below, are in the document; the rest are two
 * paddings of the list's own, as tall as the items they stand for. So a
 * library of 1,000 projects or a project of 10,000 boxes opens and scrolls
 * at the speed of one screen of items.
 *
 * - The page scrolls as before (the window's scrollbar, not a box of its
 *   own): the list reads where it lies on the screen at each scroll.
 * - Items keep their natural height (names wrap, a row's actions open in
 *   place): each drawn row is measured after it is drawn, and the rows not
 *   yet drawn count as the average of those measured.
 * - A grid (`display: grid`, the library's cards) is drawn by whole rows:
 *   its columns are read from its computed `grid-template-columns`.
 * - What is not drawn is still there for everything that does not need the
 *   DOM: the page's search filters the items, not the document. Each drawn
 *   item says where it stands in the whole list (aria-posinset of
 *   aria-setsize), as WAI-ARIA says of aria-setsize: "if only a portion of
 *   the set is present in the document structure at a given moment (in
 *   order to reduce document size), this property is needed to provide an
 *   explicit indication of set size".
 * - Moving the focus with Tab scrolls the focused item into view (the
 *   browser does), which draws the next ones before the next Tab.
 *
 * Lists shorter than WINDOW_FROM are drawn whole: nothing to gain, and
 * find-in-page sees every item.
 */
import { Fragment, type JSX, type RefObject } from 'preact';
import { useEffect, useLayoutEffect, useRef, useState } from 'preact/hooks';

/** From this many items on, a list is drawn a window at a time. */
export const WINDOW_FROM = 200;
/** Drawn beyond each edge of the screen: a fling or a Tab finds items already drawn. */
const OVERSCAN_PX = 900;

/** What an item's element must carry when the list is windowed (spread on its <li>). */
export type Position = { 'aria-posinset': number; 'aria-setsize': number } | Record<string, never>;

/** An item's element as last drawn, and what it was drawn from. */
interface Drawn<T> {
  item: T;
  index: number;
  setsize: number;
  render: (item: T, index: number, position: Position) => JSX.Element;
  element: JSX.Element;
}

export interface WindowHandle {
  /** Scrolls the item at `index` to the middle of the screen, drawing it first if it is not. */
  reveal(index: number): void;
}

interface Props<T> {
  items: T[];
  keyOf: (item: T) => string;
  /** The item's <li>, with `position` spread on it. */
  render: (item: T, index: number, position: Position) => JSX.Element;
  /** A row's height before any is measured, in CSS pixels. */
  estimate: number;
  /** Filled with the list's handle while it is mounted. */
  handle?: RefObject<WindowHandle | undefined>;
  class?: string;
  'aria-label': string;
  'aria-busy'?: boolean;
}

/**
 * Where rows start, by row: offsets[r] is the top of row r within the list's content, offsets[rows] its height.
 * A row not measured yet counts as the average of those measured, or `estimate` before any is.
 */
function offsetsOf(heights: Float64Array, estimate: number): Float64Array {
  let sum = 0;
  let count = 0;
  for (const height of heights) {
    if (!height) continue;
    sum += height;
    count += 1;
  }
  const fallback = count ? sum / count : estimate;
  const offsets = new Float64Array(heights.length + 1);
  for (let r = 0; r < heights.length; r++) offsets[r + 1] = offsets[r] + (heights[r] || fallback);
  return offsets;
}

export function WindowedList<T>({ items, keyOf, render, estimate, handle, class: className, 'aria-label': label, 'aria-busy': busy }: Props<T>) {
  const windowed = items.length >= WINDOW_FROM;
  const list = useRef<HTMLUListElement>(null);
  const [columns, setColumns] = useState(1);
  const rows = Math.ceil(items.length / columns);
  // Rows' measured heights (gap below included; 0: not measured yet), kept across redraws in a ref: they change
  // with every scroll, and only the window (range) is state.
  const heights = useRef(new Float64Array(0));
  const gap = useRef(0);
  if (heights.current.length !== rows) {
    const next = new Float64Array(rows);
    next.set(heights.current.subarray(0, Math.min(rows, heights.current.length)));
    heights.current = next;
  }
  // The rows' offsets, made again only when a height changes (null: to be made).
  const offsetsMemo = useRef<Float64Array | null>(null);
  const offsets = () => {
    if (!offsetsMemo.current || offsetsMemo.current.length !== heights.current.length + 1) offsetsMemo.current = offsetsOf(heights.current, estimate + gap.current);
    return offsetsMemo.current;
  };
  const [range, setRange] = useState<[number, number]>(() => [0, Math.min(rows, Math.ceil((window.innerHeight + OVERSCAN_PX) / estimate))]);
  const pendingReveal = useRef<number>();
  const elements = useRef(new Map<string, Drawn<T>>());

  // The latest of what the window depends on, for the listeners (which are set once).
  const state = useRef({ rows, columns, count: items.length });
  state.current = { rows, columns, count: items.length };

  /** The rows on the screen and within OVERSCAN_PX of it. */
  const compute = () => {
    const element = list.current;
    if (!element) return;
    const { rows } = state.current;
    const at = offsets();
    const top = -element.getBoundingClientRect().top - element.clientTop;
    const from = top - OVERSCAN_PX;
    const to = top + window.innerHeight + OVERSCAN_PX;
    let start = 0;
    while (start < rows && at[start + 1] <= from) start += 1;
    let end = start;
    while (end < rows && at[end] < to) end += 1;
    setRange((before) => (before[0] === start && before[1] === end ? before : [start, end]));
  };

  /** The grid's columns as laid out now (1 for a plain list); measured heights go when they change. */
  const readColumns = () => {
    const element = list.current;
    if (!element) return;
    const style = getComputedStyle(element);
    const count = style.display.includes('grid') ? Math.max(1, style.gridTemplateColumns.split(' ').filter(Boolean).length) : 1;
    const rowGap = style.display.includes('grid') ? Number.parseFloat(style.rowGap) || 0 : 0;
    if (rowGap !== gap.current) {
      gap.current = rowGap;
      offsetsMemo.current = null;
    }
    if (count !== state.current.columns) {
      heights.current = new Float64Array(Math.ceil(state.current.count / count));
      offsetsMemo.current = null;
      setColumns(count);
    }
  };

  // Layout effects: the window is found before the screen shows the list, so no frame draws the wrong items.
  useLayoutEffect(() => {
    if (!windowed) return;
    const element = list.current!;
    readColumns();
    compute();
    // Scroll events come once a frame, before it is drawn: the window follows in the same frame.
    const onScroll = () => compute();
    const resized = new ResizeObserver(() => {
      readColumns();
      compute();
    });
    resized.observe(element);
    window.addEventListener('scroll', onScroll, { passive: true });
    window.addEventListener('resize', onScroll);
    return () => {
      resized.disconnect();
      window.removeEventListener('scroll', onScroll);
      window.removeEventListener('resize', onScroll);
    };
  }, [windowed]);

  // The items changed (a search, a filter, a new list): the window is found again.
  useLayoutEffect(() => {
    if (windowed) compute();
  }, [items, columns]);

  const [startRow, endRow] = windowed ? [Math.min(range[0], rows), Math.min(range[1], rows)] : [0, rows];
  const first = windowed ? startRow * columns : 0;
  const last = windowed ? Math.min(items.length, endRow * columns) : items.length;

  // After each drawing, before the screen shows it: measure the rows drawn; when any differs from what was
  // counted for it, find the window again (which draws again, and measures again, until nothing moves).
  useLayoutEffect(() => {
    const element = list.current;
    if (!windowed || !element) return;
    let moved = false;
    const children = element.children;
    for (let r = startRow; r < endRow; r++) {
      let height = 0;
      for (let c = 0; c < columns; c++) {
        const child = children[(r - startRow) * columns + c];
        if (child) height = Math.max(height, child.getBoundingClientRect().height);
      }
      height += gap.current;
      if (Math.abs(heights.current[r] - height) > 0.5) {
        heights.current[r] = height;
        offsetsMemo.current = null;
        moved = true;
      }
    }
    const wanted = pendingReveal.current;
    if (wanted !== undefined && wanted >= first && wanted < last) {
      pendingReveal.current = undefined;
      children[wanted - first]?.scrollIntoView({ block: 'center' });
      moved = true;
    }
    if (moved) compute();
  });

  if (handle) {
    handle.current = {
      reveal(index: number) {
        const element = list.current;
        if (!element || index < 0 || index >= state.current.count) return;
        if (!windowed) return void element.children[index]?.scrollIntoView({ block: 'center' });
        // Near it first, by the heights known; once drawn, exactly (in the layout effect above).
        pendingReveal.current = index;
        const row = Math.floor(index / state.current.columns);
        const top = element.getBoundingClientRect().top + element.clientTop + window.scrollY;
        window.scrollTo({ top: Math.max(0, top + offsets()[row] - window.innerHeight / 2) });
        compute();
      },
    };
  }
  useEffect(
    () => () => {
      if (handle) handle.current = undefined;
    },
    [],
  );

  let style: JSX.CSSProperties | undefined;
  if (windowed) {
    const at = offsets();
    style = { paddingTop: `${at[startRow]}px`, paddingBottom: `${at[rows] - at[endRow]}px` };
  }
  // An item drawn again as it was (the same item at the same place, drawn by the same `render`: the page did not
  // redraw meanwhile, only the window moved) is the very element drawn before, which Preact leaves alone; so a
  // scroll costs the items that come and go, not all of those drawn.
  const drawn = new Map<string, Drawn<T>>();
  const children = items.slice(first, last).map((item, i) => {
    const index = first + i;
    const key = keyOf(item);
    const before = elements.current.get(key);
    const element =
      before && before.item === item && before.index === index && before.setsize === items.length && before.render === render
        ? before.element
        : render(item, index, windowed ? { 'aria-posinset': index + 1, 'aria-setsize': items.length } : {});
    drawn.set(key, { item, index, setsize: items.length, render, element });
    return <Fragment key={key}>{element}</Fragment>;
  });
  elements.current = drawn;
  return (
    <ul ref={list} class={className} aria-label={label} aria-busy={busy ? 'true' : undefined} style={style}>
      {children}
    </ul>
  );
}
