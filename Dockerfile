# syntax=docker/dockerfile:1
# One image for every function, the webhook and the connector (docs/deploy.md).
#   docker build -t sdewan-functions .                                  # serves all functions
#   docker build --build-arg FUNCTION=reconcile-rule -t reconcile-rule .  # serves one
# At run time FUNCTIONS=a,b (env) overrides the build arg. The server listens on PORT (default
# 8080) and answers GET /_/health and /_/ready: Kubernetes probes, Knative and OpenFaaS use those
# (a Kubernetes pod ignores HEALTHCHECK). Other entries, by command:
#   node dist/functions/validate-admission/main.js    (HTTPS webhook, manifests/webhook)
#   node dist/connector/main.js --config <file>        (event connector, docs/connector.md)
#   node dist/functions/netpol-node-agent/main.js      (NetworkPolicy node agent, a DaemonSet)
#
# The Node version matches package.json's pinned "node" devDependency (a unit test checks it).
ARG NODE_IMAGE=node:24.21.0-bookworm-slim

# --- build: compile TypeScript to dist/ -----------------------------------------------------
FROM ${NODE_IMAGE} AS build
WORKDIR /src
COPY package.json package-lock.json ./
# --ignore-scripts: the image already has Node 24; the pinned "node" package need not fetch one.
RUN npm ci --no-audit --no-fund --ignore-scripts
COPY tsconfig.json tsconfig.build.json ./
COPY shared ./shared
COPY functions ./functions
COPY connector ./connector
COPY scripts/bundle.ts ./scripts/
# dist/: every entry compiled (webhook, connector); dist/bundle/: the function server bundled into
# a few files, which loads in about half the time of ~550 module files (scripts/bundle.ts).
RUN npx tsc -p tsconfig.build.json && npm run bundle

# --- runtime: production dependencies and compiled JavaScript only ------------------------------
FROM ${NODE_IMAGE} AS runtime
ENV NODE_ENV=production
WORKDIR /app
# Debian's nftables (`nft`; 2.9 MB of the image, measured): the NetworkPolicy node agent loads
# its ruleset with `nft -f` (docs/adr/0013-netpol-agent-loads-nftables.md); nothing else runs it.
RUN apt-get update -qq \
 && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends nftables \
 && apt-get clean && rm -rf /var/lib/apt/lists/* /var/cache/apt/*.bin
COPY package.json package-lock.json ./
RUN npm ci --omit=dev --no-audit --no-fund --ignore-scripts && npm cache clean --force
COPY --from=build /src/dist ./dist
# V8 and Node defaults for a function container (measured with `npm run bench -- --only
# cold-start,function-memory`): a 2 MiB semi-space keeps the young generation at 4 MiB where it
# grew to 64 MiB under the 1,000-rule run (RSS after it 172 -> 136 MiB, no slower). The CMD's
# --lite-mode (a V8 flag NODE_OPTIONS refuses) leaves out V8's optimizing compilers: a function
# spends its time waiting on the API server and CNFs, and the optimized code, the compilers'
# memory and the pages they touch were 30-60 MiB of a function process after the 1,000-rule run
# (docs/benchmarks.md#memory). The compile cache lets a new container's first start read compiled
# code instead of compiling it (~100 ms); Node ignores entries whose file no longer matches. Node
# keys the cache's folder by the user id, so it is filled as the user that runs (1000; filled as
# root, uid 1000 never found it), then handed to root and made readable (Node writes its entries
# 0600): the server reads them and cannot rewrite the code it loads next start. The warm-up runs
# with the CMD's V8 flags: Node keys the cache's folder by them too (without --lite-mode here the
# server looked for a folder that did not exist, and found no cache).
ENV NODE_OPTIONS=--max-semi-space-size=2 \
    NODE_COMPILE_CACHE=/app/.node-compile-cache
RUN mkdir "$NODE_COMPILE_CACHE" && chown 1000:1000 "$NODE_COMPILE_CACHE" \
 && setpriv --reuid=1000 --regid=1000 --clear-groups node --lite-mode --input-type=module \
      -e "await import('./dist/bundle/runtime.js'); await import('./dist/bundle/all.js')" \
 && chown -R 0:0 "$NODE_COMPILE_CACHE" && chmod -R a+rX,go-w "$NODE_COMPILE_CACHE"
# Which function(s) to serve; empty = all. FUNCTIONS (env) wins at run time.
ARG FUNCTION=""
ENV FUNCTIONS=${FUNCTION} \
    PORT=8080
# The base image's "node" user, numerically, so runAsNonRoot can verify it.
USER 1000:1000
EXPOSE 8080
HEALTHCHECK --interval=30s --timeout=3s --start-period=10s --retries=3 \
  CMD ["node", "-e", "fetch('http://127.0.0.1:'+(process.env.PORT||8080)+'/_/health').then(r=>process.exit(r.ok?0:1),()=>process.exit(1))"]
CMD ["node", "--lite-mode", "dist/bundle/server.js"]
