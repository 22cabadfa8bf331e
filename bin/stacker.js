#!/usr/bin/env -S node --max-semi-space-size=8 --
// Plain JavaScript on purpose, written for old engines too (no top-level await, no `?.`): this
// file must run, and explain itself, on any Node version. stacker itself is TypeScript that Node
// runs directly (type stripping), which needs Node 22.18 or newer.
var REQUIRED = [22, 18];
var version = process.versions.node.split('.').map(Number);
if (version[0] < REQUIRED[0] || (version[0] === REQUIRED[0] && version[1] < REQUIRED[1])) {
  process.stderr.write(
    'stacker needs Node.js ' + REQUIRED.join('.') + ' or newer; this is Node.js ' + process.versions.node + '.\n' +
      'Inside the stacker repository, `npm start -- <command>` and `npx stacker <command>` use the\n' +
      'Node 24 that the repository pins (run `npm ci` first). Elsewhere, install Node 24.\n',
  );
  process.exit(1);
} else {
  import('./compile-cache.js')
    .then(function (cache) {
      // Cache compiled code between runs (in a folder of this user's only): it takes tens of
      // milliseconds off every start.
      cache.enablePrivateCompileCache();
      return import('../src/cli.ts');
    })
    .catch(function (error) {
      process.stderr.write('stacker failed to start: ' + (error && error.stack ? error.stack : String(error)) + '\n');
      process.exit(1);
    });
}
