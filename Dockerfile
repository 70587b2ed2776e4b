# syntax=docker/dockerfile:1
# outprobe controller image.
#
# Stage 1 installs production dependencies only (no devDependencies, no
# install scripts). The sources are TypeScript run directly by Node 24's type
# stripping (docs/adr/0003), so there is no build step: src/ is copied as is.
# Stage 2 is distroless Node.js 24: no shell, no npm, no package manager;
# numeric non-root user 65532 so the pod's runAsNonRoot can verify it; nothing
# is written to the root filesystem at run time (readOnlyRootFilesystem works).
#
# Pin the bases by digest for reproducible, reviewable builds, e.g.
#   FROM node:24.21.0-bookworm-slim@sha256:<digest> AS deps
#   FROM gcr.io/distroless/nodejs24-debian12:nonroot@sha256:<digest>
# (look the digests up with `crane digest` or `docker buildx imagetools inspect`
# and let Renovate/Dependabot keep them current). They are left as tags here
# because no digest could be resolved where this file was written.
# test/integration/image.test.ts reproduces the deps stage and runs the result.

ARG NODE_VERSION=24.21.0

FROM node:${NODE_VERSION}-bookworm-slim AS deps
WORKDIR /app
COPY package.json package-lock.json ./
# --ignore-scripts: no runtime dependency needs an install script (the `node`
# package that does is a devDependency and is omitted).
RUN npm ci --omit=dev --ignore-scripts --no-audit --no-fund \
 && npm cache clean --force

FROM gcr.io/distroless/nodejs24-debian12:nonroot AS runtime
WORKDIR /app
COPY --from=deps --chown=0:0 /app/node_modules ./node_modules
COPY --chown=0:0 package.json ./
COPY --chown=0:0 src ./src
# Owned by root, run as 65532: the application cannot modify its own code.
USER 65532:65532
ENV NODE_ENV=production
EXPOSE 8080
# The distroless entrypoint is `node`; this runs `node src/main.ts`.
ENTRYPOINT ["/nodejs/bin/node", "src/main.ts"]
