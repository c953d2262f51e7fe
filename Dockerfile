# syntax=docker/dockerfile:1
# The service's container image (docs/operations.md, "Container image").
#
#   docker build -t crm-service .                       # on Debian bookworm (the default base)
#   podman build --format docker --build-arg BASE_IMAGE=localhost/crm-base:bookworm -t crm-service .
#
# BASE_IMAGE: any Debian bookworm image with a working apt (the official one, or a root filesystem made with
# `debootstrap bookworm` and imported, as scripts/image-smoke.sh does). Both stages use it.
ARG BASE_IMAGE=debian:bookworm-slim

# ---- build: the web UI, then the production install ------------------------------------------------------
FROM ${BASE_IMAGE} AS build
ENV DEBIAN_FRONTEND=noninteractive
# A registry reached through a TLS-inspecting proxy: a CA bundle inside the build that npm trusts (a base image
# that has it, or mounted with `podman build -v <bundle>:/run/npm-ca.crt:ro --build-arg NPM_CONFIG_CAFILE=…`).
# Debian's Node.js and npm 9 only bootstrap: they install, globally, the Node.js of package.json (the `node`
# package) and npm 10, which then make the install (npm 9, or npm on Node.js 18, leaves out the platform's
# optional native packages of the web UI's bundler). The service runs on the `node` of its own node_modules.
ARG NPM_CONFIG_CAFILE
# npm 10 is run by its path (Debian's `npm` command would hand over to Debian's npm 9 again).
ENV NPM10=/usr/local/lib/node_modules/npm/bin/npm-cli.js
RUN apt-get update \
 && apt-get install -y --no-install-recommends nodejs npm git ca-certificates \
 && rm -rf /var/lib/apt/lists/*
COPY package.json /tmp/package.json
RUN npm install -g --no-audit --no-fund "node@$(node -p 'require("/tmp/package.json").dependencies.node')" npm@10.9.9 \
 && test "$(/usr/local/bin/node -p process.version)" = "v$(node -p 'require("/tmp/package.json").dependencies.node')" \
 && test "$(/usr/local/bin/node "$NPM10" --version)" = 10.9.9
ENV PATH=/usr/local/bin:/usr/local/sbin:/usr/sbin:/usr/bin:/sbin:/bin
WORKDIR /src
COPY . .
# The full install builds the web UI (npm's `prepare`); the explicit build fails the image when it fails.
RUN node "$NPM10" ci --no-audit --no-fund \
 && node_modules/.bin/node web/build.js \
 && test -f web/dist/index.html
# The production install: dev dependencies go (the web UI stays built, its sources unchanged).
RUN node "$NPM10" ci --omit=dev --no-audit --no-fund \
 && rm -rf /root/.npm \
 && test -x node_modules/.bin/node

# ---- runtime --------------------------------------------------------------------------------------------
FROM ${BASE_IMAGE}
ENV DEBIAN_FRONTEND=noninteractive
# tini: PID 1 (signals, orphans); ffmpeg: transcripts and media sources; bubblewrap: the `process` runtime's
# sandboxes; git: cloning repositories; util-linux: `script`, `unshare`, `setpriv` of the sandboxes.
RUN apt-get update \
 && apt-get install -y --no-install-recommends tini ffmpeg bubblewrap git ca-certificates util-linux \
 && rm -rf /var/lib/apt/lists/* \
 && useradd --system --uid 10001 --user-group --create-home --home-dir /home/crm --shell /usr/sbin/nologin crm
WORKDIR /app
# The code belongs to root (the service cannot change it); only the data folder and the server's bundle cache
# are the service's own.
COPY --from=build /src /app
RUN mkdir -p /data /app/node_modules/.cache/crm-server \
 && chown crm:crm /data /app/node_modules/.cache/crm-server
ENV NODE_ENV=production \
    HOST=0.0.0.0 \
    PORT=8080 \
    DATA_DIR=/data \
    PATH=/app/node_modules/.bin:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin
USER crm
VOLUME ["/data"]
EXPOSE 8080
HEALTHCHECK --interval=30s --timeout=5s --start-period=120s --retries=3 \
  CMD ["node", "-e", "fetch(`http://127.0.0.1:${process.env.PORT || 8080}/readyz`).then((r) => process.exit(r.ok ? 0 : 1), () => process.exit(1))"]
ENTRYPOINT ["/usr/bin/tini", "--"]
CMD ["node", "server/start.js"]
