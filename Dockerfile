# One image for every service; SERVICES chooses what a container runs (compose and k8s set it).
# Build: docker build -t industrial-monitoring:latest .
# The TypeScript sources run through tsx (a production dependency), as `npm start` does.

ARG NODE_IMAGE=node:24-bookworm-slim

# --- dependencies: production only, with the native modules (argon2) built for this platform
FROM ${NODE_IMAGE} AS deps
WORKDIR /app
ENV npm_config_update_notifier=false npm_config_fund=false npm_config_audit=false
COPY package.json package-lock.json ./
RUN npm ci --omit=dev && npm cache clean --force

# --- runtime
FROM ${NODE_IMAGE} AS runtime
# tini as PID 1 forwards SIGTERM and reaps the notebook runner's children. The notebooks service
# runs notebooks on a Jupyter kernel (services/notebooks/python/runner.py) in bubblewrap's sandbox; build with
# --build-arg JUPYTER=0 for a smaller image in which notebook runs answer "runtime not available".
ARG JUPYTER=1
RUN apt-get update \
    && apt-get install -y --no-install-recommends tini \
    && if [ "$JUPYTER" = "1" ]; then \
         apt-get install -y --no-install-recommends python3 python3-nbclient python3-nbformat python3-ipykernel python3-numpy python3-pandas python3-matplotlib bubblewrap; \
       fi \
    && rm -rf /var/lib/apt/lists/*
ENV NODE_ENV=production \
    PORT=3000 \
    HEALTH_PORT=9090 \
    DATA_DIR=/app/data \
    NOTEBOOKS_DIR=/app/data/notebooks
WORKDIR /app
COPY --from=deps /app/node_modules ./node_modules
COPY package.json package-lock.json tsconfig.json moleculer.config.ts ./
COPY bin ./bin
COPY lib ./lib
COPY mixins ./mixins
COPY services ./services
# The browser console's files, served by the api (services/api/console.ts).
COPY console ./console
COPY repl ./repl
# The image's own `node` user (uid 1000); only the data folder is writable.
# The named volumes mounted under it (outbox, opcua-pki) start as a copy of these folders: owned by `node`.
RUN mkdir -p /app/data/outbox /app/data/opcua-pki && chown -R node:node /app/data
USER node
EXPOSE 3000 9090
HEALTHCHECK --interval=10s --timeout=3s --start-period=30s --retries=3 \
  CMD node -e "fetch('http://127.0.0.1:'+process.env.HEALTH_PORT+'/ready').then(r=>process.exit(r.ok?0:1),()=>process.exit(1))"
STOPSIGNAL SIGTERM
# No npm or shell between tini and node: SIGTERM reaches bin/start.ts, which drains and stops.
ENTRYPOINT ["/usr/bin/tini", "--"]
CMD ["node", "--import", "tsx", "bin/start.ts"]
