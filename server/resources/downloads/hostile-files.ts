/**
 * Test files an attacker would upload to run script on the API's origin
 * (stored XSS). Each calls `reportScriptRan`, which the Chromium test
 * exposes to the page, and sets the title, should its script ever run.
 */
export const hostilePage =
  '<!doctype html><html><head><title>mix</title></head><body><script>document.title = "pwned"; if (window.reportScriptRan) window.reportScriptRan()</script></body></html>';

export const hostileSvg =
  '<svg xmlns="http://www.w3.org/2000/svg"><script>document.title = "pwned"; if (window.reportScriptRan) window.reportScriptRan()</script></svg>';

export const hostileXhtml =
  '<?xml version="1.0"?><html xmlns="http://www.w3.org/1999/xhtml"><script>document.title = "pwned"; if (window.reportScriptRan) window.reportScriptRan()</script></html>';
