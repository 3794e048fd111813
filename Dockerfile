# syntax=docker/dockerfile:1
# recall sidecar: multi-stage, production dependencies only, runs as the unprivileged "node" user.

FROM node:20-bookworm-slim AS build
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --ignore-scripts
COPY tsconfig.json ./
COPY src ./src
# The build also writes the migrated PGlite template of the ephemeral store (dist/pglite-template.tar).
COPY sql ./sql
RUN npm run build

FROM node:20-bookworm-slim AS prod-deps
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --omit=dev --ignore-scripts && npm cache clean --force

FROM node:20-bookworm-slim
# Loopback by default: in a pod the agent shares this network namespace, and trusted x-tenant-id
# headers are safe only where no other peer can send them. To listen on the pod network, set
# RECALL_HOST=0.0.0.0 together with RECALL_IDENTITY=jwt or mtls (see "Who may call" in
# docs/identity-and-deployment.md); the sidecar refuses to start on 0.0.0.0 with trusted headers.
ENV NODE_ENV=production \
    RECALL_HOST=127.0.0.1 \
    RECALL_PORT=50051 \
    RECALL_DATA_DIR=/var/lib/recall
WORKDIR /app
COPY --from=prod-deps /app/node_modules ./node_modules
COPY --from=build /app/dist ./dist
COPY package.json ./
COPY sql ./sql
# 0700: the sidecar refuses a data directory other users can enter (docs/operations.md).
RUN mkdir -p /var/lib/recall && chown node:node /var/lib/recall && chmod 700 /var/lib/recall
USER node
EXPOSE 50051
VOLUME ["/var/lib/recall"]
# Calls grpc.health.v1 Check: healthy only while the store is reachable.
HEALTHCHECK --interval=10s --timeout=3s --start-period=30s --retries=3 CMD ["node", "dist/cli/main.js", "health"]
# Exec form: the sidecar is PID 1's only child and receives SIGTERM directly for its graceful shutdown.
ENTRYPOINT ["node", "dist/cli/main.js"]
CMD ["serve"]
