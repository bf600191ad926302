/**
 * A small element builder: the page is made of DOM nodes, never of HTML
 * strings, so nothing a player's owner or a listener typed can become markup.
 * Text goes in as text nodes; attributes go through setAttribute.
 */
type Child = Node | string | number | null | undefined | false;
type Props = {
  [attribute: string]: string | number | boolean | null | undefined | EventListener | Record<string, string>;
};

export function h<K extends keyof HTMLElementTagNameMap>(tag: K, props: Props = {}, ...children: Child[]): HTMLElementTagNameMap[K] {
  const element = document.createElement(tag);
  for (const [name, value] of Object.entries(props)) {
    if (value === undefined || value === null || value === false) continue;
    if (typeof value === 'function') element.addEventListener(name.slice(2).toLowerCase(), value);
    else if (name === 'dataset') Object.assign(element.dataset, value);
    // Properties that have no attribute of the same meaning once the element is live.
    else if (name === 'value' || name === 'checked' || name === 'disabled' || name === 'hidden') (element as unknown as Record<string, unknown>)[name] = value;
    else element.setAttribute(name, value === true ? '' : String(value));
  }
  append(element, children);
  return element;
}

export function append(parent: Node, children: Child[]): void {
  for (const child of children) {
    if (child === null || child === undefined || child === false) continue;
    parent.appendChild(typeof child === 'object' ? child : document.createTextNode(String(child)));
  }
}

/** Replaces everything inside `parent` with `children`. */
export function replaceChildren(parent: Element, ...children: Child[]): void {
  parent.replaceChildren();
  append(parent, children);
}

/** 83.4 → "1:23"; 3723 → "1:02:03". */
export function formatTime(seconds: number): string {
  const whole = Math.max(0, Math.floor(Number.isFinite(seconds) ? seconds : 0));
  const h = Math.floor(whole / 3600);
  const m = Math.floor((whole % 3600) / 60);
  const s = String(whole % 60).padStart(2, '0');
  return h > 0 ? `${h}:${String(m).padStart(2, '0')}:${s}` : `${m}:${s}`;
}

/** A signed number of decibels as people write it: "+3.0 dB", "−2.5 dB" (a real minus sign), "0.0 dB". */
export function formatDb(db: number, unit = 'dB'): string {
  const rounded = Math.round(db * 10) / 10;
  if (rounded === 0) return `0.0 ${unit}`;
  return `${rounded > 0 ? '+' : '−'}${Math.abs(rounded).toFixed(1)} ${unit}`;
}

const SVG = 'http://www.w3.org/2000/svg';

/** An icon drawn as SVG (not a font glyph, which not every system has), hidden from screen readers: its button carries the name. */
export function icon(path: string): SVGSVGElement {
  const svg = document.createElementNS(SVG, 'svg');
  svg.setAttribute('viewBox', '0 0 24 24');
  svg.setAttribute('aria-hidden', 'true');
  svg.setAttribute('focusable', 'false');
  const shape = document.createElementNS(SVG, 'path');
  shape.setAttribute('d', path);
  svg.append(shape);
  return svg;
}

export const ICONS = {
  play: 'M7 4v16l13-8z',
  pause: 'M6 4h4v16H6zM14 4h4v16h-4z',
  previous: 'M6 5h2v14H6zM20 5v14L9 12z',
  next: 'M16 5h2v14h-2zM4 5v14l11-7z',
};

/** Loudness as people write it, with a real minus sign: "−9.4 LUFS". */
export const formatLevel = (value: number, unit: string) => `${value.toFixed(1).replace('-', '−')} ${unit}`;

/** A price in US cents as people read it: "$4.99". */
export const price = (cents: number) => `$${(cents / 100).toFixed(2)}`;
