# syntax=docker/dockerfile:1
# Production image of the API: compiled once in the build stage; the runtime stage installs
# production dependencies only (`npm ci --omit=dev`: no embedded PostgreSQL, no TypeScript,
# no Swagger UI and its install-time telemetry; .npmrc and packages/ say why) and runs plain
# node as an unprivileged numeric user (Kubernetes runAsNonRoot can verify it).
# Node 24 LTS, pinned to a full version; supported: Node 22.22.3+ (22 LTS) and 24.15+ (24 LTS),
# package.json engines, both proven by .ci/run.
ARG NODE_IMAGE=node:24.21.0-bookworm-slim

FROM ${NODE_IMAGE} AS build
WORKDIR /app
ENV CI=true
# .npmrc (legacy-peer-deps) and packages/ (the swagger-ui-dist stand-in) belong to the lockfile.
COPY package.json package-lock.json .npmrc ./
COPY packages ./packages
RUN npm ci --no-audit --no-fund
COPY tsconfig.json tsconfig.build.json nest-cli.json ormconfig.ts ./
COPY apps ./apps
COPY libs ./libs
COPY config ./config
COPY scripts ./scripts
# nest build; the operator console (client typed from the operator OpenAPI document, Vite bundle in
# dist/console, which the runtime stage's dist/ carries); then scripts/copy-docs-assets.mjs (postbuild)
# puts the /docs page's Redoc bundle in dist/docs.
RUN npm run build

FROM ${NODE_IMAGE} AS runtime
ENV NODE_ENV=production \
    HOST=0.0.0.0 \
    PORT=3000 \
    METRICS_PORT=9464
WORKDIR /app
COPY package.json package-lock.json .npmrc ./
COPY packages ./packages
RUN npm ci --omit=dev --ignore-scripts --no-audit --no-fund \
 && npm cache clean --force \
 && rm -rf /root/.npm /tmp/*
COPY --from=build /app/dist ./dist
# DOCS_ENABLED is off by default with NODE_ENV=production: /docs answers 404 unless it is set.
# config/sdk-versions.json is read at run time, relative to the working directory.
COPY config ./config
# Files stay root-owned and read-only for the process: the root filesystem can be mounted read-only.
USER 1000:1000
EXPOSE 3000 9464
HEALTHCHECK --interval=10s --timeout=3s --start-period=20s --retries=3 \
  CMD ["node", "-e", "fetch('http://127.0.0.1:' + (process.env.PORT || 3000) + '/v1/readyz').then((r) => process.exit(r.ok ? 0 : 1), () => process.exit(1))"]
# node itself is PID 1 and handles SIGTERM (readiness 503, drain delay, in-flight requests
# finish, exit 0); no npm wrapper in between (npm would exit 143).
# Migrations: MIGRATIONS_RUN=true at start, the `migrate` init container of every pod in
# Kubernetes (deploy/base/deployment.yaml), or a one-off:
#   docker run --rm -e DATABASE_URL=… entitlements-api node dist/apps/api/src/migrate.js
STOPSIGNAL SIGTERM
# The V8 flags are package.json's start:prod ones (docs/decisions/three-v8-flags.md: one V8
# helper thread, the old generation grows fourfold before the next full collection, and a
# 32 MB semi-space lets objects that live a few hundred milliseconds die young).
# The tracing preload starts OpenTelemetry when OTEL_EXPORTER_OTLP_ENDPOINT is set and does
# nothing otherwise (docs/operations.md, "Tracing").
CMD ["node", "--v8-pool-size=1", "--heap-growing-percent=300", "--max-semi-space-size=32", "--import", "./dist/apps/api/src/tracing.js", "dist/apps/api/src/main.js"]
