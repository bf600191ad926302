/**
 * The player's `color` as the page's accent, with a text colour that stays
 * readable on it: WCAG 2.2 asks 4.5:1 for text (SC 1.4.3), and a player's
 * colour can be anything from #ffff00 to #000080. The text on accent-filled
 * buttons is black or white, whichever contrasts more.
 */
const HEX = /^#([0-9a-f]{3}|[0-9a-f]{6})$/i;

/** WCAG 2.2 relative luminance of an sRGB colour. */
function luminance(hex: string): number {
  const digits = hex.length === 4 ? [...hex.slice(1)].map((d) => d + d).join('') : hex.slice(1);
  const [r, g, b] = [0, 2, 4].map((i) => {
    const channel = Number.parseInt(digits.slice(i, i + 2), 16) / 255;
    return channel <= 0.04045 ? channel / 12.92 : ((channel + 0.055) / 1.055) ** 2.4;
  });
  return 0.2126 * r + 0.7152 * g + 0.0722 * b;
}

/** WCAG contrast ratio: (L1 + 0.05) / (L2 + 0.05), the lighter over the darker. */
export const contrast = (a: number, b: number) => (Math.max(a, b) + 0.05) / (Math.min(a, b) + 0.05);

export function applyAccent(color: string): void {
  if (!HEX.test(color)) return;
  const style = document.documentElement.style;
  const accent = luminance(color);
  style.setProperty('--accent', color);
  style.setProperty('--on-accent', contrast(accent, 1) >= contrast(accent, 0) ? '#ffffff' : '#000000');
}
