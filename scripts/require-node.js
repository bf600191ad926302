// Run before npm start, npm test and the other entry points (package.json's pre-scripts).
// Plain JavaScript that any Node parses, so that an older Node is told in one line what to
// do, instead of failing with a stack trace at the first TypeScript file it cannot load.
const [major] = process.versions.node.split('.').map(Number);
if (major < 24) {
  console.error(
    `Audio Share needs Node.js 24 or newer, and this is Node.js ${process.versions.node}: install Node 24 (nvm install 24, fnm install 24, or on Linux without them: source scripts/node24.sh), then run npm install again.`,
  );
  process.exit(1);
}
