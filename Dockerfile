# syntax=docker/dockerfile:1
# Production image of the API: compiled once in the build stage, run with plain node
# (no TypeScript at run time) as the unprivileged `node` user.

FROM node:20-bookworm-slim AS build
WORKDIR /app
ENV CI=true
COPY package.json package-lock.json ./
RUN npm ci --no-audit --no-fund
COPY tsconfig.json tsconfig.build.json nest-cli.json ormconfig.ts ./
COPY apps ./apps
COPY libs ./libs
COPY config ./config
RUN npm run build \
 && npm prune --omit=dev --no-audit --no-fund \
 && npm cache clean --force

FROM node:20-bookworm-slim AS runtime
ENV NODE_ENV=production \
    HOST=0.0.0.0 \
    PORT=3000
WORKDIR /app
COPY --from=build --chown=node:node /app/package.json /app/package-lock.json ./
COPY --from=build --chown=node:node /app/node_modules ./node_modules
COPY --from=build --chown=node:node /app/dist ./dist
# config/sdk-versions.json is read at run time, relative to the working directory.
COPY --from=build --chown=node:node /app/config ./config
USER node
EXPOSE 3000
HEALTHCHECK --interval=10s --timeout=3s --start-period=20s --retries=3 \
  CMD ["node", "-e", "fetch('http://127.0.0.1:' + (process.env.PORT || 3000) + '/v1/healthz').then((r) => process.exit(r.ok ? 0 : 1), () => process.exit(1))"]
# node itself is PID 1 and handles SIGTERM (graceful shutdown, exit 0); no npm wrapper in between.
# `npm run migration:run` is not available here (it builds); migrations run at start
# (MIGRATIONS_RUN=true) or with: node node_modules/typeorm/cli.js migration:run -d dist/ormconfig.js
STOPSIGNAL SIGTERM
CMD ["node", "dist/apps/api/src/main.js"]
