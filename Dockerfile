# syntax=docker/dockerfile:1
# mailverdict in one image: the API, the dashboard, the batch workers and the CLI (docs/deploy.md).
#
#   docker build -t mailverdict .
#   docker run -p 8080:8080 -v mailverdict:/data mailverdict
#
# Behind a TLS-intercepting proxy, give npm the proxy's CA as a build secret:
#   docker build --secret id=npm_ca,src=/etc/ssl/certs/ca-certificates.crt -t mailverdict .
#
# The base is a build argument so that a registry mirror or a local image can stand in for the
# official one (`--build-arg NODE_IMAGE=registry.example.com/node:24-bookworm-slim`). It must be a
# Debian-based Node image of line 22 or later: the store loads better-sqlite3 13 there, whose
# native module comes prebuilt (N-API, so it loads in any Node >= 22) inside the package.
ARG NODE_IMAGE=node:24-bookworm-slim

# ---- build: every dependency, the compiled server, the dashboard and widget bundles ----------------
FROM ${NODE_IMAGE} AS build
WORKDIR /src
# The lock file alone first: this layer is rebuilt only when the dependencies change.
COPY package.json package-lock.json ./
COPY clients/typescript/package.json clients/typescript/
# No install scripts: `prepare` would build before the sources are here, and better-sqlite3 12
# (loaded only on Node 20) would be compiled for nothing; 13 and esbuild need none.
RUN --mount=type=secret,id=npm_ca \
    if [ -s /run/secrets/npm_ca ]; then export NODE_EXTRA_CA_CERTS=/run/secrets/npm_ca; fi; \
    node -e 'if (+process.versions.node.split(".")[0] < 22) { console.error("mailverdict images need Node >= 22 (Node " + process.version + " given; Node 20 is past its end of life)"); process.exit(1) }' \
    && npm ci --no-audit --no-fund --no-update-notifier --ignore-scripts
# What `npm run build` reads, and nothing else: a change to the docs or the tests rebuilds nothing.
COPY tsconfig.json tsconfig.build.json ./
COPY src ./src
COPY web ./web
COPY scripts ./scripts
# Then only what runs: production dependencies, without the packages this Node never loads
# (better-sqlite3 12 and the sources and other platforms' binaries of 13: about 50 MB), and
# proof that the store's native module loads in this image's Node.
RUN npm run build \
    && npm prune --omit=dev --no-audit --no-fund --no-update-notifier --ignore-scripts \
    && rm -rf node_modules/@mailverdict/client node_modules/better-sqlite3 \
       node_modules/better-sqlite3-v13/deps node_modules/better-sqlite3-v13/src \
       node_modules/better-sqlite3-v13/build \
    && find node_modules/better-sqlite3-v13/prebuilds -name '*.node' \
       ! -name "linux-$(node -p process.arch).node" ! -name "linuxmusl-$(node -p process.arch).node" -delete \
    && node --input-type=module -e "const { Sqlite } = await import('/src/dist/store/dialect/better-sqlite3.js'); new Sqlite(':memory:').close()"

# ---- runtime: Node, tini, production dependencies, dist/ and the docs --------------------------------
FROM ${NODE_IMAGE}
# tini as PID 1 (what `docker run --init` adds): it forwards SIGTERM/SIGINT to node and reaps
# zombies, and a signal that arrives before node listens for it still stops the container.
RUN apt-get -o Acquire::Languages=none update \
    && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends tini \
    && rm -rf /var/lib/apt/lists/* /var/cache/apt/*.bin \
    && groupadd --system --gid 10001 mailverdict \
    && useradd --system --uid 10001 --gid 10001 --home-dir /data --shell /usr/sbin/nologin mailverdict \
    && install -d -m 700 -o 10001 -g 10001 /data
WORKDIR /app
COPY --from=build /src/package.json ./
COPY --from=build /src/node_modules ./node_modules
COPY --from=build /src/dist ./dist
COPY docs ./docs

# Every setting is an environment variable (docs/configuration.md); these are the image's defaults.
# MAILVERDICT_PUBLIC_BASE_URL names where users reach the service: set it to your public URL.
ENV NODE_ENV=production \
    MAILVERDICT_HOST=0.0.0.0 \
    MAILVERDICT_PORT=8080 \
    MAILVERDICT_DATA_DIR=/data \
    MAILVERDICT_PUBLIC_BASE_URL=http://localhost:8080
# The SQLite store, its secret.key and the first start's bootstrap-keys.json.
VOLUME /data
EXPOSE 8080
# Numeric, so that Kubernetes' runAsNonRoot can check it.
USER 10001:10001
# SIGTERM: `serve` stops accepting and finishes requests in flight (10 s grace, then refuses what
# is left with 503), a worker stops claiming and hands its unfinished chunks back. Give the
# container 30 s before SIGKILL (docker run --stop-timeout 30, compose stop_grace_period: 30s,
# Kubernetes terminationGracePeriodSeconds: 30; Docker's default is 10 s).
STOPSIGNAL SIGTERM
# /readyz: the store and, when configured, Redis answer. A `worker` container has no HTTP
# listener: turn this off for it (compose.yaml and deploy/kubernetes show how).
HEALTHCHECK --interval=30s --timeout=5s --start-period=60s --retries=3 \
    CMD ["node", "/app/dist/cli/healthcheck.js"]
ENTRYPOINT ["/usr/bin/tini", "--", "node", "/app/dist/cli/main.js"]
CMD ["serve"]
