/**
 * Remakes web/assets/favicon.ico from web/assets/icon.svg: `tsx scripts/make-favicon.ts`.
 *
 * Browsers ask every origin for /favicon.ico on their own, whatever a page
 * links to; the server answers it with this file. It is an ICO that holds
 * PNG images (16, 32 and 48 pixels square), drawn from the SVG by Chromium,
 * so it is the same icon the player pages link to. The result is committed;
 * run this again only when icon.svg changes. Chromium's rasteriser decides
 * the exact pixels, so another Chromium may make slightly different bytes.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { launchBrowser } from '../server/testing/browser.ts';

const assets = resolve(import.meta.dirname, '../web/assets');
const sizes = [16, 32, 48];

const svg = readFileSync(join(assets, 'icon.svg'), 'utf8');
const browser = await launchBrowser();
const images: Buffer[] = [];
try {
  for (const size of sizes) {
    const page = await browser.newPage({ viewport: { width: size, height: size }, deviceScaleFactor: 1 });
    await page.setContent(`<!doctype html><style>html,body{margin:0;background:transparent}img{display:block;width:${size}px;height:${size}px}</style><img alt="">`);
    // The SVG is loaded as an image (as a browser shows an icon), from a data: URL; wait until it has decoded.
    await page.locator('img').evaluate(async (img: HTMLImageElement, source) => {
      img.src = `data:image/svg+xml;base64,${btoa(source)}`;
      await img.decode();
    }, svg);
    images.push(await page.screenshot({ type: 'png', omitBackground: true }));
    await page.close();
  }
} finally {
  await browser.close();
}
writeFileSync(join(assets, 'favicon.ico'), ico(images, sizes));
console.log(`web/assets/favicon.ico remade: ${sizes.map((size) => `${size}x${size}`).join(', ')} PNG images.`);

/**
 * An ICO file of PNG images: the ICONDIR header (reserved 0, type 1 = icon,
 * image count), one 16-byte ICONDIRENTRY per image (width and height, 0
 * meaning 256; no palette; 1 plane; 32 bits per pixel; the image's length
 * and offset), then the PNG files as they are. Windows Vista and every
 * current browser read PNG images inside an ICO.
 */
function ico(pngs: Buffer[], pixelSizes: number[]): Buffer {
  const header = Buffer.alloc(6);
  header.writeUInt16LE(0, 0);
  header.writeUInt16LE(1, 2);
  header.writeUInt16LE(pngs.length, 4);
  const entries = Buffer.alloc(16 * pngs.length);
  let offset = header.length + entries.length;
  pngs.forEach((png, i) => {
    const at = 16 * i;
    entries.writeUInt8(pixelSizes[i] % 256, at);
    entries.writeUInt8(pixelSizes[i] % 256, at + 1);
    entries.writeUInt8(0, at + 2);
    entries.writeUInt8(0, at + 3);
    entries.writeUInt16LE(1, at + 4);
    entries.writeUInt16LE(32, at + 6);
    entries.writeUInt32LE(png.length, at + 8);
    entries.writeUInt32LE(offset, at + 12);
    offset += png.length;
  });
  return Buffer.concat([header, entries, ...pngs]);
}
