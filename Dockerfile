# syntax=docker/dockerfile:1
#
# stacker, the daemon, as an image: Node 24, the production dependencies and stacker compiled to
# JavaScript (dist/), owned by root and read-only to the `node` user the daemon runs as.
# Compiled rather than run from the TypeScript sources: Node's type stripping keeps a compiler
# resident in every process (about 18 MB), and a daemon pays that for its whole life. The
# compiled files are the sources with the types erased (tsconfig.build.json), nothing else.
#
#   docker build --build-arg STACKER_COMMIT=$(git rev-parse HEAD) -t stacker .
#   docker run -d --name stacker --env-file .env --stop-timeout 60 \
#     -v "$PWD/config:/app/config:ro" -v stacker-data:/data -p 127.0.0.1:9464:9464 stacker
#
# Dry-run unless STACKER_MODE=live is in .env AND `--live` is given: `docker run … stacker run --live`.
# Any other command works the same way, with the daemon's volumes (its strategies, its journal):
#   docker run --rm --env-file .env -v "$PWD/config:/app/config:ro" -v stacker-data:/data stacker check
# or beside the running daemon: `docker exec stacker stacker check`.
# The journal (stacker.db) lives in the /data volume; a named volume takes the image's ownership
# of /data (the node user). For a bind mount, make the folder writable by uid 1000 or pass
# `--user "$(id -u):$(id -g)"`. The kill switch can live there too: STACKER_KILL_SWITCH_FILE=/data/STOP.
#
# No Docker engine runs where stacker is built and tested: test/e2e/compiled-daemon.test.ts
# compiles dist/ as the build stage does and starts it as this image would (ENTRYPOINT, CMD, ENV
# with the README's .env, USER, HEALTHCHECK, STOPSIGNAL).

# ---- production dependencies ---------------------------------------------------------------
FROM node:24.21-slim AS deps
WORKDIR /app
COPY package.json package-lock.json ./
# Exactly the lockfile, production only: the devDependency `node` (the pinned Node binary the
# repository uses on machines with an older Node) is not installed; the image has its own Node.
# No install scripts run: no production dependency has one.
RUN npm ci --omit=dev --ignore-scripts --no-audit --no-fund

# ---- compiled stacker ----------------------------------------------------------------------
FROM node:24.21-slim AS build
WORKDIR /app
COPY package.json package-lock.json tsconfig.json tsconfig.build.json ./
# The whole lockfile, for the compiler and the type packages; nothing of it leaves this stage.
RUN npm ci --ignore-scripts --no-audit --no-fund
COPY src/ ./src/
COPY strategies/ ./strategies/
# tsc through the image's Node: with --ignore-scripts the pinned `node` package has no binary.
RUN node node_modules/typescript/bin/tsc -p tsconfig.build.json
# The commit the image is built from, for `stacker --version`, the start's log and /api/status
# (`0.1.0+4742248`): the image holds no .git to read it from, so it is given as a build argument,
# `docker build --build-arg STACKER_COMMIT=$(git rev-parse HEAD) -t stacker .`, and kept in
# dist/COMMIT; without it the version is package.json's alone.
ARG STACKER_COMMIT=""
RUN if [ -n "$STACKER_COMMIT" ]; then printf '%s\n' "$STACKER_COMMIT" > dist/COMMIT; fi

# ---- runtime -------------------------------------------------------------------------------
FROM node:24.21-slim
# /app/bin first: `stacker` is a command in the image (`docker exec <container> stacker orders`).
# The API-key locks in the volume too: a `--user` without a home (HOME=/) could not create
# ~/.stacker, and two containers sharing the volume then see each other's key.
ENV STACKER_DATA_DIR=/data \
    STACKER_LOCK_DIR=/data/locks \
    STACKER_METRICS_PORT=9464 \
    STACKER_METRICS_HOST=0.0.0.0 \
    STACKER_METRICS_ALLOWED_HOSTS=localhost,127.0.0.1,[::1] \
    PATH=/app/bin:$PATH
WORKDIR /app
# Only what runs. Root keeps ownership (no --chown): the daemon cannot rewrite its own code.
COPY --from=deps /app/node_modules ./node_modules
COPY package.json package-lock.json ./
COPY --from=build /app/dist ./dist/
COPY bin/daemon.sh bin/stacker ./bin/
COPY config/ ./config/
COPY README.md ./
# The one folder the daemon writes: the journal, its locks, the kill-switch file if you put it there.
RUN mkdir -p /data && chown node:node /data
VOLUME /data
# The `node` user (uid 1000) comes with the base image.
USER node
# /healthz and /metrics (Prometheus). STACKER_METRICS_HOST=0.0.0.0 so `-p 127.0.0.1:9464:9464` reaches it
# (from this host only: the status page has controls). STACKER_METRICS_ALLOWED_HOSTS keeps it
# answering only requests that name localhost: a web page cannot point a domain of its own at
# 127.0.0.1 (DNS rebinding) and read it. Behind a proxy that sends another Host, name it there.
EXPOSE 9464
# No curl in a slim image, and none needed: Node's own fetch probes /healthz (200 = healthy,
# 503 = starting, stopping, or a problem a human must see: many outlive a restart). Docker only
# marks the container unhealthy; Swarm would replace it, Kubernetes ignores this and uses its own
# probes (README "Health checks and probes": liveness on /metrics or TCP, readiness on /healthz).
# It asks 127.0.0.1, so keep STACKER_METRICS_HOST at 0.0.0.0 or 127.0.0.1; without a metrics port
# there is nothing to probe (run with --no-healthcheck).
HEALTHCHECK --interval=30s --timeout=5s --start-period=60s --retries=3 \
  CMD ["node", "-e", "fetch('http://127.0.0.1:' + (process.env.STACKER_METRICS_PORT || '9464') + '/healthz', { signal: AbortSignal.timeout(4000) }).then((r) => process.exit(r.ok ? 0 : 1), () => process.exit(1))"]
# No tini: stacker runs as PID 1 and that is fine here. A PID 1 gets no default signal handling,
# but the daemon installs its own SIGTERM/SIGINT handlers (stop scheduling, finish the slot in
# flight, close the journal, exit 0), and it starts no child processes, so there are no zombies
# to reap. `docker stop` sends SIGTERM and waits 10 s before SIGKILL; give a slow exchange more
# with `docker stop -t 60`. Prefer an init anyway? `docker run --init` adds one without a rebuild.
STOPSIGNAL SIGTERM
# bin/daemon.sh picks Node's flags for the command (the daemon's trade speed for memory; see the
# script) and then execs Node, so Node is PID 1 and receives the STOPSIGNAL itself.
ENTRYPOINT ["sh", "bin/daemon.sh"]
CMD ["run"]
