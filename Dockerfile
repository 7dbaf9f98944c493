# The User Group Service's image, built from exactly the release artefact (`npm run release`):
#   docker build -t ugs .
#   docker run -p 8080:8080 -v ugs-data:/data --stop-timeout 30 ugs
# docs/deployment.md#container-image says more (volumes, variables, PostgreSQL).
ARG NODE_VERSION=24

# 1. The release, as `npm run release` makes it anywhere: release/ugs-<version>.tgz (+ .sha256, SBOM).
FROM node:${NODE_VERSION}-bookworm AS build
WORKDIR /src
COPY . .
RUN npm ci && npm run release

# 2. The release installed with production dependencies only, from the tarball alone (its
#    dependencies are bundled: nothing is fetched). The SQLite binding compiles here, where python3,
#    make and g++ are, for the same Node and the same Debian as the runtime below.
FROM node:${NODE_VERSION}-bookworm AS install
WORKDIR /release
COPY --from=build /src/release/ ./
RUN sha256sum -c ugs-*.tgz.sha256 && npm install --prefix /opt/ugs --omit=dev --offline --no-audit --no-fund ./ugs-*.tgz

# 3. The runtime: the slim image, the installed release, a non-root user and its /data volume.
FROM node:${NODE_VERSION}-bookworm-slim
COPY --from=install /opt/ugs /opt/ugs
COPY --from=install /release/ugs-*.cdx.json /opt/ugs/
RUN mkdir /data && chown node:node /data
VOLUME /data
# NODE_OPTIONS: V8 sizes its young generation from the host's memory (up to 2 × 64 MiB on a large
# host) unless told; 16 MiB semi-spaces keep the server's RSS some 100 MB lower at the same CPU per
# request (docs/deployment.md#memory).
ENV PATH=/opt/ugs/node_modules/.bin:$PATH \
    NODE_OPTIONS=--max-semi-space-size=16 \
    UGS_HOST=0.0.0.0 \
    UGS_PORT=8080 \
    UGS_DATABASE_URL=sqlite:/data/ugs.db
EXPOSE 8080
USER node
WORKDIR /data
# Ready means the database answers. The slim image has no curl: Node's own fetch asks.
HEALTHCHECK --interval=10s --timeout=5s --start-period=30s --retries=3 \
  CMD ["node", "-e", "fetch('http://127.0.0.1:' + (process.env.UGS_PORT || 8080) + '/readyz').then((r) => process.exit(r.ok ? 0 : 1), () => process.exit(1))"]
# The server is PID 1: it handles SIGTERM itself (drains in-flight requests, closes the database, exits 0).
STOPSIGNAL SIGTERM
CMD ["ugs", "serve"]
