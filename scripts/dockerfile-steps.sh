#!/usr/bin/env bash
# Replays the Dockerfile's steps without a Docker engine (none runs where stacker is built), so
# what the image would do is checked for real rather than assumed:
#
#   1. base image: every FROM is node:24*, and the Node that stands in for it here (the
#      repository's pinned one) is the same major.minor as the tag;
#   2. build context: staged in a scratch folder with .dockerignore's rules (no .env, no
#      node_modules, no journals);
#   3. the stages before the final one (deps, build), their COPY lines and RUN commands
#      verbatim, each in a scratch folder: deps has every production package of the lockfile and
#      none of the development ones (the pinned `node` binary above all), and no production
#      package needed an install script; build has the compiled CLI and strategies in dist/;
#   4. runtime stage: its COPY lines into a scratch root that stands for the image's `/`, owned
#      by root as COPY leaves them; its RUN commands with the VOLUME paths moved under that root;
#   5. the USER (uid 1000, `node` in the base image) can write the VOLUME and nothing else;
#   6. as that user, from WORKDIR, with only the image's ENV: `stacker --help`, `stacker run --help`;
#   7. as that user: the daemon (`run`, dry-run) against a local sandbox exchange, the
#      HEALTHCHECK command run verbatim until it passes, /metrics scraped, then SIGTERM (the
#      STOPSIGNAL) and a clean exit 0 with the journal written under the volume.
#
# What it cannot show: the base image's own contents (its Node build, its `node` user) and the
# layer mechanics; those come from the official node image. Steps that need root (switching to
# uid 1000) or a command that does not exist yet are reported as pending, not passed.
#
# Usage: scripts/dockerfile-steps.sh      (KEEP_SCRATCH=1 keeps the scratch folder to look at)
# Exit: 0 when nothing failed (pending steps are listed), 1 otherwise.
set -uo pipefail

REPO="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$REPO"
PINNED_NODE="$REPO/node_modules/.bin/node"
if [[ ! -x "$PINNED_NODE" ]]; then
  echo "no pinned Node at node_modules/.bin/node: run npm ci first" >&2
  exit 1
fi
export PATH="$REPO/node_modules/.bin:$PATH"

SCRATCH="$(mktemp -d /tmp/stacker-docker.XXXXXX)"
chmod 755 "$SCRATCH"
PIDS=()
cleanup() {
  for pid in "${PIDS[@]}"; do kill "$pid" 2>/dev/null; done
  if [[ "${KEEP_SCRATCH:-0}" == 1 ]]; then echo "scratch kept: $SCRATCH"; else rm -rf "$SCRATCH"; fi
}
trap cleanup EXIT

PASSED=0 FAILED=0 PENDING=()
step() { printf '\n== %s\n' "$*"; }
ok() { printf '  ok      %s\n' "$*"; PASSED=$((PASSED + 1)); }
bad() { printf '  FAILED  %s\n' "$*"; FAILED=$((FAILED + 1)); }
pending() { printf '  PENDING %s\n' "$*"; PENDING+=("$*"); }
plan() { node scripts/dockerfile.ts "$@"; }

# The image's `node` user. The base image defines it as 1000:1000 (docker-node's Dockerfile).
IMAGE_UID=1000 IMAGE_GID=1000
as_user() { setpriv --reuid="$IMAGE_UID" --regid="$IMAGE_GID" --clear-groups -- "$@"; }
CAN_SWITCH=0
if [[ "$(id -u)" == 0 ]] && command -v setpriv >/dev/null; then CAN_SWITCH=1; fi

# ---- 1 -------------------------------------------------------------------------------------
step "1. base image and Node version"
NODE_VERSION="$("$PINNED_NODE" -p process.versions.node)"
while read -r image _; do
  if [[ "$image" =~ ^node:(24(\.[0-9]+)*)(-slim)?$ ]]; then
    tag="${BASH_REMATCH[1]}"
    if [[ "$NODE_VERSION." == "$tag."* ]]; then ok "FROM $image; the pinned Node here is $NODE_VERSION (same $tag line)"
    else bad "FROM $image but the pinned Node here is $NODE_VERSION: bump one of them"; fi
  else
    bad "FROM $image is not a node:24 image"
  fi
done < <(plan from)

# ---- 2 -------------------------------------------------------------------------------------
step "2. build context (.dockerignore)"
CONTEXT="$SCRATCH/context"
echo "  $(plan context "$CONTEXT")"
leaked="$(cd "$CONTEXT" && find . \( -name .env -o -name node_modules -o -name '*.db' -o -name '*.db-wal' -o -name .git \) -print)"
if [[ -z "$leaked" ]]; then ok "no .env, node_modules, journal or .git in the context"; else bad "in the context: $leaked"; fi

# Docker COPY: a folder's contents go into the destination; a file goes into it (dest ends with /) or becomes it.
copy_into() { # <source path> <destination path>
  local src="$1" dest="$2"
  if [[ -d "$src" ]]; then mkdir -p "$dest" && cp -a "$src/." "$dest/"
  elif [[ "$dest" == */ ]]; then mkdir -p "$dest" && cp -a "$src" "$dest"
  else mkdir -p "$(dirname "$dest")" && cp -a "$src" "$dest"; fi
}

# Replays one stage's COPY lines into <root>; `--from=<stage>` reads <scratch>/<stage>.
replay_copies() { # <stage> <root>
  local stage="$1" root="$2" workdir from dest sources src target
  workdir="$(plan workdir "$stage")"
  while IFS=$'\t' read -r from dest sources; do
    [[ "$dest" == /* ]] && target="$root$dest" || target="$root$workdir/$dest"
    IFS=$'\t' read -r -a list <<<"$sources"
    for src in "${list[@]}"; do
      if [[ "$from" == - ]]; then
        if [[ ! -e "$CONTEXT/$src" ]]; then bad "COPY $src: not in the build context"; continue; fi
        copy_into "$CONTEXT/${src%/}" "$target"
      else
        if [[ ! -e "$SCRATCH/$from$src" ]]; then bad "COPY --from=$from $src: the stage has no such path"; continue; fi
        copy_into "$SCRATCH/$from${src%/}" "$target"
      fi
      echo "  COPY ${from/#-/context}:$src -> $dest"
    done
  done < <(plan copies "$stage")
  # COPY without --chown leaves files owned by root, whoever owns them in the context.
  chown -R 0:0 "$root" 2>/dev/null || true
}

# ---- 3 -------------------------------------------------------------------------------------
# Every stage before the final one, in order, each in its own scratch root (<scratch>/<name>),
# which is where a later `COPY --from=<name>` reads.
replay_stage() { # <stage name>: its COPY lines, then its RUN commands as written, from its WORKDIR
  local name="$1" root="$SCRATCH/$1" command
  mkdir -p "$root"
  replay_copies "$name" "$root"
  # Its COPY lines first, then its RUNs: the same result as file order while no RUN removes
  # what a later COPY brings (the build stage copies src/ after npm ci only to cache layers).
  while IFS= read -r -d '' command; do
    echo "  RUN $command"
    if (cd "$root$(plan workdir "$name")" && sh -c "$command") >"$SCRATCH/$name-run.log" 2>&1; then ok "$name: RUN finished"
    else bad "$name: RUN failed: $(tail -5 "$SCRATCH/$name-run.log")"; fi
  done < <(plan runs "$name")
}
mapfile -t STAGES < <(plan from | awk 'NF > 1 { print $2 }')
for name in "${STAGES[@]}"; do
  step "3. $name stage: COPY and RUN as written"
  replay_stage "$name"
done
DEPS_WORKDIR="$SCRATCH/deps$(plan workdir deps)"
DEPS_CHECK="$(cd "$DEPS_WORKDIR" && node -e '
  const { existsSync } = require("node:fs");
  const lock = require("./package-lock.json").packages;
  const problems = [];
  let prod = 0, dev = 0;
  for (const [path, entry] of Object.entries(lock)) {
    if (path === "") continue;
    const present = existsSync(path);
    if (entry.dev || entry.devOptional) { dev++; if (present) problems.push("dev package installed: " + path); }
    else { prod++; if (!present && !entry.optional) problems.push("production package missing: " + path);
           if (entry.hasInstallScript) problems.push("production package has an install script (--ignore-scripts skips it): " + path); }
  }
  if (existsSync("node_modules/node") || existsSync("node_modules/.bin/node")) problems.push("the pinned node devDependency is in the image");
  console.log(problems.length === 0 ? "ok " + prod + " production packages, " + dev + " development ones left out (node, typescript, vitest…)" : "bad " + problems.join("; "));
')"
if [[ "$DEPS_CHECK" == ok* ]]; then ok "deps: ${DEPS_CHECK#ok }"; else bad "deps: ${DEPS_CHECK#bad }"; fi
echo "  node_modules: $(du -sh "$DEPS_WORKDIR/node_modules" 2>/dev/null | cut -f1)"
BUILD_WORKDIR="$SCRATCH/build$(plan workdir build)"
if [[ -f "$BUILD_WORKDIR/dist/src/cli.js" && -f "$BUILD_WORKDIR/dist/strategies/index.js" ]] && ! find "$BUILD_WORKDIR/dist" -name '*.ts' | grep -q .; then
  ok "build: dist/ holds the compiled CLI and strategies, no .ts file ($(find "$BUILD_WORKDIR/dist" -name '*.js' | wc -l) .js files)"
else
  bad "build: dist/src/cli.js or dist/strategies/index.js missing, or .ts files left in dist/"
fi

# ---- 4 -------------------------------------------------------------------------------------
step "4. runtime stage: COPY, then RUN with the volume under the scratch root"
ROOT="$SCRATCH/root"
mkdir -p "$ROOT"
replay_copies final "$ROOT"
WORKDIR="$(plan workdir final)"
APP="$ROOT$WORKDIR"
mapfile -t VOLUMES < <(plan volumes final)
while IFS= read -r -d '' command; do
  mapped="$command"
  for volume in "${VOLUMES[@]}"; do mapped="${mapped//" $volume"/" $ROOT$volume"}"; done
  mapped="${mapped//node:node/$IMAGE_UID:$IMAGE_GID}"
  echo "  RUN $command"
  echo "      as: $mapped"
  if sh -c "$mapped" >"$SCRATCH/final-run.log" 2>&1; then ok "RUN finished"; else bad "RUN failed: $(cat "$SCRATCH/final-run.log")"; fi
done < <(plan runs final)
for volume in "${VOLUMES[@]}"; do
  owner="$(stat -c %u:%g "$ROOT$volume" 2>/dev/null)"
  if [[ "$owner" == "$IMAGE_UID:$IMAGE_GID" ]]; then ok "VOLUME $volume exists, owned by the node user"; else bad "VOLUME $volume: owner ${owner:-missing}, expected $IMAGE_UID:$IMAGE_GID"; fi
done
for required in dist/src/cli.js dist/strategies/index.js bin/daemon.sh package.json node_modules config/strategies; do
  if [[ -e "$APP/$required" ]]; then ok "$WORKDIR/$required is in the image"; else bad "$WORKDIR/$required is missing"; fi
done
USER_NAME="$(plan user final)"
if [[ "$USER_NAME" == node || "$USER_NAME" == "$IMAGE_UID"* ]]; then ok "USER $USER_NAME (uid $IMAGE_UID)"; else bad "USER $USER_NAME is not the node user"; fi

# The image's environment: its ENV, paths under the volume moved into the scratch root, no host variables.
mkdir -p "$SCRATCH/bin" "$ROOT/home/node"
ln -s "$(readlink -f "$PINNED_NODE")" "$SCRATCH/bin/node"
chown "$IMAGE_UID:$IMAGE_GID" "$ROOT/home/node" 2>/dev/null || true
IMAGE_ENV=("PATH=$SCRATCH/bin:/usr/local/bin:/usr/bin:/bin" "HOME=$ROOT/home/node")
while IFS= read -r pair; do
  key="${pair%%=*}" value="${pair#*=}"
  for volume in "${VOLUMES[@]}"; do [[ "$value" == "$volume" || "$value" == "$volume/"* ]] && value="$ROOT$value"; done
  if [[ "$key" == PATH ]]; then
    # Docker expands $PATH to the base image's; image paths move under the scratch root.
    value="${value//\$PATH/$SCRATCH/bin:/usr/local/bin:/usr/bin:/bin}"
    value="${value//$WORKDIR\//$APP/}"
  fi
  IMAGE_ENV+=("$key=$value")
done < <(plan env final)
in_image() { # runs a command as the image would: its user, its WORKDIR, its environment only
  if [[ "$CAN_SWITCH" == 1 ]]; then (cd "$APP" && exec setpriv --reuid="$IMAGE_UID" --regid="$IMAGE_GID" --clear-groups -- env -i "${IMAGE_ENV[@]}" "$@")
  else (cd "$APP" && exec env -i "${IMAGE_ENV[@]}" "$@"); fi
}
launch() { # <log> <command…>: in_image in the background; LAUNCHED is the command's own pid (exec keeps it)
  local log="$1"; shift
  if [[ "$CAN_SWITCH" == 1 ]]; then (cd "$APP" && exec setpriv --reuid="$IMAGE_UID" --regid="$IMAGE_GID" --clear-groups -- env -i "${IMAGE_ENV[@]}" "$@") >"$log" 2>&1 &
  else (cd "$APP" && exec env -i "${IMAGE_ENV[@]}" "$@") >"$log" 2>&1 & fi
  LAUNCHED=$!
  PIDS+=("$LAUNCHED")
}

# ---- 5 -------------------------------------------------------------------------------------
step "5. the node user writes the volume and nothing else"
if [[ "$CAN_SWITCH" == 1 ]]; then
  writable="$(as_user find "$ROOT" -path "$ROOT/home" -prune -o -writable -print 2>/dev/null | sed "s#^$ROOT##" | sort)"
  expected="$(printf '%s\n' "${VOLUMES[@]}" | sort)"
  if [[ "$writable" == "$expected" ]]; then ok "writable for uid $IMAGE_UID: ${writable//$'\n'/ } (and the base image's /tmp and home)"
  else bad "writable for uid $IMAGE_UID: ${writable//$'\n'/ } (expected ${expected//$'\n'/ })"; fi
  if as_user touch "$ROOT${VOLUMES[0]}/.probe" 2>/dev/null; then ok "creates a file in ${VOLUMES[0]}"; rm -f "$ROOT${VOLUMES[0]}/.probe"; else bad "cannot create a file in ${VOLUMES[0]}"; fi
  if as_user touch "$APP/dist/src/.probe" 2>/dev/null; then bad "can change the application in $WORKDIR/dist"; else ok "cannot change $WORKDIR/dist"; fi
else
  pending "switching to uid $IMAGE_UID needs root and setpriv; the permission checks did not run"
fi

# ---- 6 -------------------------------------------------------------------------------------
step "6. the entrypoint runs: stacker --help, stacker run --help"
mapfile -d '' -t ENTRY < <(plan entrypoint)
ENTRYPOINT=("${ENTRY[@]:0:${#ENTRY[@]}-1}")
echo "  ENTRYPOINT ${ENTRYPOINT[*]}, CMD ${ENTRY[*]: -1}"
if out="$(in_image "${ENTRYPOINT[@]}" --help 2>&1)" && [[ "$out" == *Usage:* ]]; then ok "stacker --help"; else bad "stacker --help: $out"; fi
RUN_EXISTS=0
if out="$(in_image "${ENTRYPOINT[@]}" run --help 2>&1)"; then ok "stacker run --help"; RUN_EXISTS=1
elif [[ "$out" == *"unknown command"* ]]; then pending "stacker run does not exist yet"
else bad "stacker run --help: $out"; fi

# ---- 7 -------------------------------------------------------------------------------------
step "7. the daemon in the image's shape: HEALTHCHECK, /metrics, STOPSIGNAL"
free_port() { node -e 'const s=require("node:net").createServer().listen(0,"127.0.0.1",()=>{console.log(s.address().port);s.close()})'; }
wait_for() { # <seconds> <command…>: retries every 0.25 s
  local deadline=$((SECONDS + $1)); shift
  until "$@" >/dev/null 2>&1; do (( SECONDS >= deadline )) && return 1; sleep 0.25; done
}
if [[ "$RUN_EXISTS" == 1 ]]; then
  SANDBOX_PORT="$(free_port)" METRICS_PORT="$(free_port)"
  # The README's own .env (a copy of .env.example), as `docker run --env-file .env` passes it:
  # KEY=VALUE lines as written, over the image's ENV; comments and blank lines skipped.
  while IFS= read -r line; do [[ "$line" =~ ^[A-Za-z_][A-Za-z0-9_]*= ]] && IMAGE_ENV+=("$line"); done <"$REPO/.env.example"
  IMAGE_ENV+=("STACKER_BASE_URL=http://127.0.0.1:$SANDBOX_PORT" "STACKER_METRICS_PORT=$METRICS_PORT")
  launch "$SCRATCH/sandbox.log" "${ENTRYPOINT[@]}" sandbox --port "$SANDBOX_PORT"
  wait_for 30 in_image node -e "fetch('http://127.0.0.1:$SANDBOX_PORT/api/v4/public/ping').then((r) => process.exit(r.ok ? 0 : 1), () => process.exit(1))" \
    || bad "the sandbox exchange did not answer: $(tail -5 "$SCRATCH/sandbox.log")"
  launch "$SCRATCH/daemon.log" "${ENTRYPOINT[@]}" "${ENTRY[@]: -1}"
  DAEMON="$LAUNCHED"
  mapfile -d '' -t PROBE < <(plan healthcheck)
  healthy_or_gone() { in_image "${PROBE[@]}" || ! kill -0 "$DAEMON" 2>/dev/null; }
  if wait_for 60 healthy_or_gone && kill -0 "$DAEMON" 2>/dev/null; then
    ok "HEALTHCHECK (${PROBE[*]:0:2} …) passes against the running daemon"
    metrics="$(in_image node -e "fetch('http://127.0.0.1:$METRICS_PORT/metrics').then((r) => r.text()).then(console.log)")"
    if [[ "$metrics" == *"stacker_info{"* ]]; then ok "/metrics answers: $(grep -c '^stacker_' <<<"$metrics") stacker_ samples"; else bad "/metrics: $metrics"; fi
    kill -TERM "$DAEMON"
    if wait_for 30 bash -c "! kill -0 $DAEMON"; then
      wait "$DAEMON"; code=$?
      if [[ "$code" == 0 ]]; then ok "SIGTERM: the daemon stopped and exited 0"; else bad "SIGTERM: exit $code: $(tail -5 "$SCRATCH/daemon.log")"; fi
    else
      bad "SIGTERM: the daemon did not stop within 30 s"
    fi
    journal="$(find "$ROOT${VOLUMES[0]}" -name '*.db' | head -1)"
    if [[ -n "$journal" ]]; then ok "journal written under the volume: ${journal#$ROOT}"; else bad "no journal under ${VOLUMES[0]}"; fi
    # `docker exec <container> stacker journal`: stacker is a command on the image's PATH.
    if out="$(in_image stacker journal --mode dry-run 2>&1)"; then ok "stacker on the image's PATH reads the journal"; else bad "stacker journal in the image: $out"; fi
  elif missing="$(grep -m1 -o "Cannot find module '[^']*'" "$SCRATCH/daemon.log")"; then
    # Missing from the image but present in the repository: a COPY line is missing. Missing from
    # both: someone is still writing it.
    missing="${missing#Cannot find module \'}" missing="${missing%\'}"
    if [[ "$missing" == "$APP/"* && ! -e "$REPO/${missing#"$APP"/}" ]]; then
      pending "the daemon does not start yet: ${missing#"$APP"/} is not written yet"
    else
      bad "the daemon cannot find ${missing#"$APP"/} in the image (the repository has it: is a COPY line missing?)"
    fi
  else
    bad "HEALTHCHECK never passed; daemon log: $(tail -20 "$SCRATCH/daemon.log")"
  fi
else
  pending "daemon smoke test waits for stacker run"
fi

# ---- summary -------------------------------------------------------------------------------
printf '\n%s passed, %s failed' "$PASSED" "$FAILED"
if [[ "${#PENDING[@]}" -gt 0 ]]; then printf ', %s pending:\n' "${#PENDING[@]}"; printf '  - %s\n' "${PENDING[@]}"; else printf '\n'; fi
[[ "$FAILED" == 0 ]]
