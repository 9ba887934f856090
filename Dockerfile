# syntax=docker/dockerfile:1
# One image recipe for every process; SERVICE names which. Build from the repository root:
#   docker build --build-arg SERVICE=agents -t workspace/agents .
#   docker build --build-arg SERVICE=gateway --build-arg HEALTHCHECK="http http://127.0.0.1:8080/healthz" -t workspace/gateway .
ARG NODE_IMAGE=node:24-bookworm-slim

FROM ${NODE_IMAGE} AS build
ARG SERVICE
WORKDIR /repo
ENV TURBO_TELEMETRY_DISABLED=1
COPY . .
RUN test -n "${SERVICE}" && test -d "services/${SERVICE}" \
 && npm install --no-audit --no-fund \
 && npx turbo run build --filter="@workspace/${SERVICE}..." \
 && npm install --omit=dev --no-audit --no-fund --ignore-scripts

FROM ${NODE_IMAGE}
ARG SERVICE
# What the container health check asks: grpc.health.v1 of a service, or the gateway's /healthz.
ARG HEALTHCHECK="grpc 127.0.0.1:50051"
ENV NODE_ENV=production SERVICE=${SERVICE} HEALTHCHECK=${HEALTHCHECK}
WORKDIR /app
COPY --from=build /repo/package.json ./
COPY --from=build /repo/node_modules ./node_modules
COPY --from=build /repo/packages ./packages
# The service's package, build output and any dependencies npm could not hoist.
COPY --from=build /repo/services/${SERVICE} ./services/${SERVICE}
RUN ln -s "services/${SERVICE}/dist/main.js" main.js
USER node
EXPOSE 8080 50051 9464
HEALTHCHECK --interval=10s --timeout=3s --retries=3 CMD ["node", "packages/platform/dist/healthcheck.js"]
CMD ["node", "main.js"]
