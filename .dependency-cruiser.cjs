/**
 * The architecture as import rules (checked by `npm run lint:deps`, part of `npm test`).
 *
 *   functions/ -> shared/runtime -> capabilities -> building blocks -> shared/core
 *   capabilities:    shared/{sync,admission,egress,clusterlink,netpol}
 *   building blocks: shared/{kinds,kube,cnf,events}
 *
 * A layer imports only layers below it; folders of one layer do not import each other; the
 * connector sits beside the functions and uses building blocks only. `plan-*` modules are pure:
 * they reach no I/O module, directly or through anything they import. In a capability only the
 * modules named in CAPABILITY_IO (entries, appliers, stores, readers) may do I/O; every other
 * module of it is pure the same way (docs/overview.md, "One shape"). No cycles anywhere.
 */
const CAPABILITIES = "(sync|admission|egress|clusterlink|netpol)";
const BUILDING_BLOCKS = "(kinds|kube|cnf|events)";

/**
 * Modules that touch the network, the disk or a server framework. dependency-cruiser names a
 * Node built-in without its `node:` prefix ("fs"), so both spellings are listed.
 */
const IO_MODULES = [
  "^node:(http|https|http2|net|tls|dgram|dns|fs|fs/promises|child_process|worker_threads)$",
  "^(http|https|http2|net|tls|dgram|dns|fs|fs/promises|child_process|worker_threads)$",
  "^shared/kube/(client|transport|config)\\.ts$",
  "^shared/cnf/(client|transport|session)\\.ts$",
  "node_modules/(express|cloudevents|@kubernetes/client-node|pino|prom-client|p-retry)/",
];

/**
 * Any Node built-in, as dependency-cruiser names it ("fs", "timers/promises"), but util
 * (isDeepStrictEqual) and crypto (createHash): those compute. A pure module must not draw a
 * random number from crypto either; no rule can see that, review does.
 */
const NODE_BUILTINS = "^(node:)?(?!(util|crypto)$)[a-z_/]+$";

/**
 * The I/O modules of each capability, by file name: its stores and readers, and the index that
 * exports them (entries are every `on-*`, appliers every `apply-*`). Everything else in a
 * capability is pure: it reaches no Node built-in, no kube or CNF client and none of these.
 */
const CAPABILITY_IO = {
  sync: [
    "index",
    "store",
    "kube-store",
    "sync",
    "resync",
    "observe",
    "cnf-lease",
    "key-material",
    "prune-ledger",
    "secret-refs",
    "preview",
    "recent-cnf-lists",
  ],
  admission: ["index", "observe", "dry-run", "kube-reader"],
  egress: ["index", "kube-store"],
  netpol: ["index", "store", "kube-store", "nft", "agent-loop", "agent-store", "agent-sync"],
  clusterlink: ["index", "store", "kube-store", "lease-by-port", "heartbeat", "record-events"],
};
const CAPABILITY_IO_PATHS = [
  ...Object.entries(CAPABILITY_IO).map(
    ([capability, names]) => `^shared/${capability}/(${names.join("|")})\\.ts$`,
  ),
  // Entries (on-*) and appliers (apply-*), in every capability.
  `^shared/${CAPABILITIES}/(on|apply)-[^/]*\\.ts$`,
];

/** @type {import('dependency-cruiser').IConfiguration} */
module.exports = {
  forbidden: [
    {
      name: "no-cycles",
      comment: "A cycle hides which module is the lower one; split out what both need.",
      severity: "error",
      from: {},
      to: { circular: true },
    },
    {
      name: "core-is-a-leaf",
      comment: "shared/core is the vocabulary every layer uses; it imports nothing else of ours.",
      severity: "error",
      from: { path: "^shared/core/" },
      to: { path: "^(shared/(?!core/)|functions/|connector/|dev/|bench/|test/)" },
    },
    {
      name: "building-blocks-import-only-core",
      comment:
        "kinds, kube, cnf and events sit side by side above core and do not know each other.",
      severity: "error",
      from: { path: `^shared/${BUILDING_BLOCKS}/` },
      to: {
        path: "^(shared/|functions/|connector/|dev/|bench/|test/)",
        pathNot: ["^shared/core/", `^shared/$1/`],
      },
    },
    {
      name: "capabilities-import-only-lower-layers",
      comment:
        "A capability uses building blocks and core, never another capability or the runtime.",
      severity: "error",
      from: { path: `^shared/${CAPABILITIES}/` },
      to: {
        path: "^(shared/|functions/|connector/|dev/|bench/|test/)",
        pathNot: ["^shared/core/", `^shared/${BUILDING_BLOCKS}/`, `^shared/$1/`],
      },
    },
    {
      name: "runtime-below-functions",
      comment: "The runtime serves functions; it never imports one.",
      severity: "error",
      from: { path: "^shared/runtime/" },
      to: { path: "^(functions/|connector/|dev/|bench/|test/)" },
    },
    {
      name: "connector-uses-building-blocks",
      comment:
        "The connector delivers events; it shares transport and intake, not reconcile logic.",
      severity: "error",
      from: { path: "^connector/" },
      to: {
        path: "^(shared/|functions/|dev/|bench/|test/)",
        pathNot: ["^shared/core/", `^shared/${BUILDING_BLOCKS}/`],
      },
    },
    {
      name: "product-code-ignores-tooling",
      comment:
        "What ships (functions, shared, connector) never imports tests, benches or dev tools.",
      severity: "error",
      from: { path: "^(shared|functions|connector)/" },
      to: { path: "^(dev|bench|test)/" },
    },
    {
      name: "plans-are-pure",
      comment: "A plan-* module computes from its inputs: it reaches no I/O, even indirectly.",
      severity: "error",
      from: { path: "^(shared/.+|connector|functions/.+)/plan-[^/]*\\.ts$" },
      to: { path: IO_MODULES, reachable: true },
    },
    {
      name: "capability-cores-are-pure",
      comment:
        "A capability module not named in CAPABILITY_IO computes from its inputs: it reaches no Node built-in, no kube or CNF client and no I/O module of a capability, even indirectly.",
      severity: "error",
      from: { path: `^shared/${CAPABILITIES}/`, pathNot: CAPABILITY_IO_PATHS },
      to: { path: [NODE_BUILTINS, ...IO_MODULES, ...CAPABILITY_IO_PATHS], reachable: true },
    },
  ],
  options: {
    // Node built-ins resolve to their bare name ("fs"): included, or no rule could see them.
    includeOnly:
      "^(shared|functions|connector|dev|bench|test|scripts)/|^node:|^[a-z_/]+$|node_modules/",
    doNotFollow: { path: "node_modules" },
    exclude: { path: "(^|/)node_modules/.*/node_modules/" },
    tsPreCompilationDeps: true,
    tsConfig: { fileName: "tsconfig.json" },
    enhancedResolveOptions: {
      conditionNames: ["import", "require", "node", "default"],
    },
    reporterOptions: { text: { highlightFocused: true } },
  },
};
