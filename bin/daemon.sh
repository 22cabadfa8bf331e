#!/bin/sh
# Starts the compiled stacker (dist/, from `npm run build` or the image's build stage): the
# Docker image's ENTRYPOINT and `npm run daemon`. `exec` replaces this shell with Node, so Node
# is the process that gets SIGTERM (and PID 1 in a container). `--` ends Node's own options:
# Node would otherwise take stacker's `--env-file FILE` as its own, even after the script name.
#
# `run`, the long-lived daemon, gets Node flags that trade speed it does not need for memory it
# keeps for its whole life (each measured by `npm run bench`, README "Memory"). A slot does a
# few signed requests and journal writes, so running it without V8's compilers costs a few
# milliseconds at most; a backtest or any other command runs with Node's defaults:
#   --max-semi-space-size=1  a 1 MB young generation: a process that wakes a few times a day has
#                            no use for a large nursery;
#   --single-threaded        no V8 background threads (GC and compiles run on the main thread,
#                            between slots);
#   --no-opt --no-maglev --no-sparkplug
#                            JavaScript stays in V8's interpreter: no compiled code to keep;
#   --liftoff-only           undici's HTTP parser (WebAssembly) stays on V8's baseline
#                            compiler: the optimising tier alone kept ~9 MB resident.
# Every other command gets --max-semi-space-size=8, as `npm start` and bin/stacker.js give it: an
# 8 MB young generation in place of V8's default (up to 64 MB here) keeps a long backtest's
# peak memory ~50 MB lower at the same speed (README "Benchmarks").
set -eu
# An older Node on PATH first (a hand-written service unit) failed on a missing export, naming
# nothing the operator could act on: say which versions, as bin/stacker.js does.
version="$(node --version 2>/dev/null || echo none)"
major="$(echo "$version" | sed -n 's/^v\([0-9]*\)\..*/\1/p')"
minor="$(echo "$version" | sed -n 's/^v[0-9]*\.\([0-9]*\)\..*/\1/p')"
if [ -z "$major" ] || [ "$major" -lt 22 ] || { [ "$major" -eq 22 ] && [ "$minor" -lt 18 ]; }; then
  echo "stacker needs Node.js 22.18 or newer; the node on PATH is $version ($(command -v node || echo 'not found')). Install Node 24, or put it first on PATH." >&2
  exit 1
fi
cli="$(dirname "$0")/../dist/src/cli.js"
if [ ! -f "$cli" ]; then
  echo "stacker: $cli not found: run \`npm run build\` first (the Docker image builds it itself)" >&2
  exit 1
fi
if [ "${1:-}" = run ]; then
  exec node --max-semi-space-size=1 --single-threaded --no-opt --no-maglev --no-sparkplug --liftoff-only -- "$cli" "$@"
fi
exec node --max-semi-space-size=8 -- "$cli" "$@"
