// The player page's script, served as a static file: the page's CSP
// (script-src 'self') runs no inline script. Plain JavaScript, no build step.
'use strict';

// The player's colour as the accent. Set through the CSSOM, which the CSP
// allows, rather than an inline style attribute, which it does not.
const accent = document.documentElement.dataset.accent;
if (accent && /^#[0-9a-fA-F]{3,8}$/.test(accent)) document.documentElement.style.setProperty('--accent', accent);

// Each track's stream: the only one offered when the player sets a quality;
// otherwise the best the connection carries (the Network Information API's
// downlink, in Mbit/s, where the browser has it): lossless or the original
// from 10 Mbit/s, the compressed rendition below that.
for (const audio of document.querySelectorAll('audio')) {
  const offered = audio.dataset;
  const fast = (navigator.connection?.downlink ?? 10) >= 10;
  const order = fast ? ['lossless', 'original', 'compressed'] : ['compressed', 'original', 'lossless'];
  const quality = order.find((name) => offered[name]);
  if (!quality) continue;
  audio.dataset.quality = quality;
  audio.src = offered[quality];
}
