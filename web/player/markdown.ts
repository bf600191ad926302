/**
 * Comment messages are Markdown (CommonMark). The spec: "Pages render it
 * with raw HTML disabled, so it can format but never script." micromark
 * (CommonMark-compliant) escapes any HTML typed in a comment unless told
 * otherwise (`allowDangerousHtml`, left off), and keeps only safe link
 * protocols (`allowDangerousProtocol`, left off: no `javascript:`). Images
 * are switched off: the page's CSP loads no image from another site, and a
 * comment is no way to make a listener's browser fetch one.
 */
import { micromark } from 'micromark';

const noImages = { disable: { null: ['labelStartImage'] } };

/** The message as an element: markup from micromark alone, whose only HTML is what Markdown itself makes. */
export function renderMessage(message: string): HTMLElement {
  const element = document.createElement('div');
  element.className = 'message';
  element.innerHTML = micromark(message, { extensions: [noImages] });
  // Links open in a new tab and tell the target nothing of this page (its URL holds the player id).
  for (const link of element.querySelectorAll('a')) {
    link.target = '_blank';
    link.rel = 'noopener noreferrer nofollow ugc';
  }
  return element;
}
