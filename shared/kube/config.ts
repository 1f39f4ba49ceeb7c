/**
 * Where the API server is and how to authenticate to it, read without @kubernetes/client-node
 * (importing it costs a function process about a second and 80 MB). Sources, first that exists
 * wins: $KUBECONFIG (a list of files, merged as kubectl merges them), ~/.kube/config, the pod's
 * service account. A user authenticated by `exec` or `auth-provider`, or a cluster behind a
 * `proxy-url`, loads client-node on the first request and lets it authenticate (and pick the
 * proxy agent, which the transport then sends every request through).
 */
import { readFileSync, statSync } from "node:fs";
import type { OutgoingHttpHeaders } from "node:http";
import type https from "node:https";
import { isIPv6 } from "node:net";
import { homedir } from "node:os";
import path from "node:path";
import { YAMLParseError, parse } from "yaml";
import * as z from "zod";

/** The part of the current cluster that requests need. */
export interface ClusterInfo {
  readonly server: string;
  readonly proxyUrl?: string;
}

/** A loaded kubeconfig, as requests use it (client-node's KubeConfig satisfies it too). */
export interface KubeConfigSource {
  getCurrentCluster(): ClusterInfo | null;
  /** Sets TLS material and auth (headers, basic `auth`) on the options of one request. */
  applyToHTTPSOptions(options: https.RequestOptions): Promise<void>;
}

export interface LoadKubeConfigOptions {
  /** Default: process.env (KUBECONFIG, KUBERNETES_SERVICE_HOST, KUBERNETES_SERVICE_PORT). */
  readonly env?: Readonly<Record<string, string | undefined>>;
  /** Default: the user's home directory (for ~/.kube/config). */
  readonly homeDir?: string;
  /** Default: /var/run/secrets/kubernetes.io/serviceaccount. */
  readonly serviceAccountDir?: string;
  /** Clock for re-reading credential files. Default Date.now. */
  readonly now?: () => number;
}

const SERVICE_ACCOUNT_DIR = "/var/run/secrets/kubernetes.io/serviceaccount";
/** Credential files (tokens, certificates) are re-read this often, as client-go does. */
export const CREDENTIAL_FILE_REFRESH_MS = 60_000;

const clusterSchema = z.looseObject({
  server: z.string().min(1),
  "certificate-authority": z.string().optional(),
  "certificate-authority-data": z.string().optional(),
  "insecure-skip-tls-verify": z.boolean().optional(),
  "tls-server-name": z.string().optional(),
  "proxy-url": z.string().optional(),
});

const userSchema = z.looseObject({
  token: z.string().optional(),
  tokenFile: z.string().optional(),
  "client-certificate": z.string().optional(),
  "client-certificate-data": z.string().optional(),
  "client-key": z.string().optional(),
  "client-key-data": z.string().optional(),
  username: z.string().optional(),
  password: z.string().optional(),
  as: z.string().optional(),
  exec: z.unknown().optional(),
  "auth-provider": z.unknown().optional(),
});

const contextSchema = z.looseObject({
  cluster: z.string().min(1),
  user: z.string().optional(),
  namespace: z.string().optional(),
});

/** The kubeconfig subset we read; an empty file parses as null. */
const kubeconfigFileSchema = z
  .looseObject({
    clusters: z.array(z.looseObject({ name: z.string().min(1), cluster: clusterSchema })).nullish(),
    // `user: {}` (anonymous) is written by some tools as `user: null`.
    users: z
      .array(z.looseObject({ name: z.string().min(1), user: userSchema.nullish() }))
      .nullish(),
    contexts: z.array(z.looseObject({ name: z.string().min(1), context: contextSchema })).nullish(),
    "current-context": z.string().optional(),
  })
  .nullable();

type Cluster = z.infer<typeof clusterSchema>;
type User = z.infer<typeof userSchema>;
type Context = z.infer<typeof contextSchema>;

/** Every file of a KUBECONFIG list merged: the first file to define a name wins. */
interface MergedKubeconfig {
  readonly files: readonly string[];
  readonly clusters: Map<string, Cluster>;
  readonly users: Map<string, User>;
  readonly contexts: Map<string, Context>;
  currentContext: string | undefined;
}

export function loadKubeConfig(options: LoadKubeConfigOptions = {}): KubeConfigSource {
  const env = options.env ?? process.env;
  const now = options.now ?? Date.now;
  const kubeconfigList = env.KUBECONFIG ?? "";
  if (kubeconfigList !== "") {
    const files = kubeconfigList.split(path.delimiter).filter((file) => file !== "");
    return sourceFromKubeconfig(readKubeconfigFiles(files), now);
  }
  const homeConfig = path.join(options.homeDir ?? homedir(), ".kube", "config");
  if (isFile(homeConfig)) return sourceFromKubeconfig(readKubeconfigFiles([homeConfig]), now);
  const serviceAccountDir = options.serviceAccountDir ?? SERVICE_ACCOUNT_DIR;
  if (isFile(path.join(serviceAccountDir, "token"))) {
    return inClusterSource(env, serviceAccountDir, now);
  }
  throw new Error(
    "no Kubernetes API server configured: set KUBECONFIG, or run in a pod with a service account",
  );
}

function isFile(file: string): boolean {
  return statSync(file, { throwIfNoEntry: false })?.isFile() ?? false;
}

/** kubectl's merge: files that do not exist are skipped; current-context from the first that sets it. */
function readKubeconfigFiles(files: readonly string[]): MergedKubeconfig {
  const merged: MergedKubeconfig = {
    files,
    clusters: new Map(),
    users: new Map(),
    contexts: new Map(),
    currentContext: undefined,
  };
  const existing = files.filter(isFile);
  if (existing.length === 0) {
    throw new Error(`KUBECONFIG names no file that exists: ${files.join(path.delimiter)}`);
  }
  for (const file of existing) mergeFile(merged, file);
  return merged;
}

function mergeFile(merged: MergedKubeconfig, file: string): void {
  const parsed = kubeconfigFileSchema.safeParse(parseYaml(file, readFileSync(file, "utf8")));
  if (!parsed.success) {
    throw new Error(`kubeconfig ${file} is not valid: ${z.prettifyError(parsed.error)}`);
  }
  const { clusters, users, contexts, "current-context": currentContext } = parsed.data ?? {};
  const dir = path.dirname(path.resolve(file));
  for (const { name, cluster } of clusters ?? []) {
    addFirst(merged.clusters, name, resolveClusterPaths(cluster, dir));
  }
  for (const { name, user } of users ?? []) {
    addFirst(merged.users, name, resolveUserPaths(user ?? {}, dir));
  }
  for (const { name, context } of contexts ?? []) addFirst(merged.contexts, name, context);
  merged.currentContext ||= currentContext || undefined;
}

/** The parser's own message quotes the offending line, which may hold a credential: not kept. */
function parseYaml(file: string, text: string): unknown {
  try {
    return parse(text);
  } catch (error) {
    const position = error instanceof YAMLParseError ? error.linePos?.[0] : undefined;
    const at = position === undefined ? "" : ` (line ${position.line}, column ${position.col})`;
    throw new Error(`kubeconfig ${file} is not valid YAML${at}`);
  }
}

function addFirst<T>(entries: Map<string, T>, name: string, value: T): void {
  if (!entries.has(name)) entries.set(name, value);
}

/** kubectl resolves a relative path against the directory of the kubeconfig that holds it. */
const resolvePath = (dir: string, file: string | undefined): string | undefined =>
  file === undefined ? undefined : path.resolve(dir, file);

const resolveClusterPaths = (cluster: Cluster, dir: string): Cluster => ({
  ...cluster,
  "certificate-authority": resolvePath(dir, cluster["certificate-authority"]),
});

const resolveUserPaths = (user: User, dir: string): User => ({
  ...user,
  tokenFile: resolvePath(dir, user.tokenFile),
  "client-certificate": resolvePath(dir, user["client-certificate"]),
  "client-key": resolvePath(dir, user["client-key"]),
});

interface CurrentContext {
  readonly name: string;
  readonly context: Context;
  readonly cluster: Cluster;
  readonly user: User;
}

function currentContext(config: MergedKubeconfig): CurrentContext {
  const where = `kubeconfig ${config.files.join(path.delimiter)}`;
  const name = config.currentContext;
  if (name === undefined) throw new Error(`${where} sets no current-context`);
  const context = config.contexts.get(name);
  if (context === undefined) {
    throw new Error(`${where}: current-context "${name}" is not among its contexts`);
  }
  const cluster = config.clusters.get(context.cluster);
  if (cluster === undefined) {
    throw new Error(
      `${where}: context "${name}" names cluster "${context.cluster}", which is not defined`,
    );
  }
  // A context without a user is anonymous.
  const user = context.user === undefined ? {} : config.users.get(context.user);
  if (user === undefined) {
    throw new Error(
      `${where}: context "${name}" names user "${context.user}", which is not defined`,
    );
  }
  return { name, context, cluster, user };
}

function sourceFromKubeconfig(config: MergedKubeconfig, now: () => number): KubeConfigSource {
  const { name: contextName, context, cluster, user } = currentContext(config);
  const clusterInfo: ClusterInfo = {
    server: cluster.server.replace(/\/+$/, ""),
    ...(cluster["proxy-url"] === undefined ? {} : { proxyUrl: cluster["proxy-url"] }),
  };
  if (user.exec !== undefined || user["auth-provider"] !== undefined || clusterInfo.proxyUrl) {
    return new ClientNodeSource(clusterInfo, {
      clusters: [{ name: context.cluster, cluster }],
      users: context.user === undefined ? [] : [{ name: context.user, user }],
      contexts: [{ name: contextName, context }],
      "current-context": contextName,
    });
  }
  return new StaticSource(clusterInfo, {
    ca: credential(cluster["certificate-authority-data"], cluster["certificate-authority"], now),
    cert: credential(user["client-certificate-data"], user["client-certificate"], now),
    key: credential(user["client-key-data"], user["client-key"], now),
    token: user.token === undefined ? credential(undefined, user.tokenFile, now) : () => user.token,
    skipTlsVerify: cluster["insecure-skip-tls-verify"] === true,
    tlsServerName: cluster["tls-server-name"],
    basicAuth: user.username === undefined ? undefined : `${user.username}:${user.password ?? ""}`,
    impersonate: user.as,
  });
}

/** In a pod: the API server from the service environment, the service account's CA and token. */
function inClusterSource(
  env: Readonly<Record<string, string | undefined>>,
  dir: string,
  now: () => number,
): KubeConfigSource {
  const host = env.KUBERNETES_SERVICE_HOST;
  const port = env.KUBERNETES_SERVICE_PORT;
  if (!host || !port) {
    throw new Error(
      `a service account token is mounted (${dir}) but KUBERNETES_SERVICE_HOST/PORT are not set`,
    );
  }
  return new StaticSource(
    { server: `https://${isIPv6(host) ? `[${host}]` : host}:${port}` },
    {
      ca: credential(undefined, path.join(dir, "ca.crt"), now),
      token: credential(undefined, path.join(dir, "token"), now),
      skipTlsVerify: false,
    },
  );
}

/** A credential's current value: inline base64 data, or a file's content re-read periodically. */
type Credential = () => string | undefined;

function credential(
  data: string | undefined,
  file: string | undefined,
  now: () => number,
): Credential {
  if (data !== undefined) {
    const value = Buffer.from(data, "base64").toString("utf8");
    return () => value;
  }
  if (file === undefined) return () => undefined;
  return refreshedFile(file, now);
}

/**
 * Read at load (a missing file fails there), then again once the last read is
 * CREDENTIAL_FILE_REFRESH_MS old: bound service-account tokens and certificates rotate on disk.
 */
function refreshedFile(file: string, now: () => number): Credential {
  const read = (): string => readFileSync(file, "utf8").trim();
  let value = read();
  let readAt = now();
  return () => {
    if (now() - readAt >= CREDENTIAL_FILE_REFRESH_MS) {
      value = read();
      readAt = now();
    }
    return value;
  };
}

interface Credentials {
  readonly ca?: Credential;
  readonly cert?: Credential;
  readonly key?: Credential;
  readonly token?: Credential;
  readonly skipTlsVerify: boolean;
  readonly tlsServerName?: string | undefined;
  /** `user:password` for HTTP basic auth. */
  readonly basicAuth?: string | undefined;
  /** Impersonate-User (the kubeconfig's `as`). */
  readonly impersonate?: string | undefined;
}

class StaticSource implements KubeConfigSource {
  constructor(
    private readonly cluster: ClusterInfo,
    private readonly credentials: Credentials,
  ) {}

  getCurrentCluster(): ClusterInfo {
    return this.cluster;
  }

  applyToHTTPSOptions(options: https.RequestOptions): Promise<void> {
    const { ca, cert, key, skipTlsVerify, tlsServerName, basicAuth } = this.credentials;
    const tls = { ca: ca?.(), cert: cert?.(), key: key?.() };
    for (const [name, value] of Object.entries(tls)) {
      if (value !== undefined) options[name as keyof typeof tls] = value;
    }
    if (skipTlsVerify) options.rejectUnauthorized = false;
    if (tlsServerName !== undefined) options.servername = tlsServerName;
    if (basicAuth !== undefined) options.auth = basicAuth;
    const headers = this.authHeaders();
    if (Object.keys(headers).length > 0) options.headers = { ...headerMap(options), ...headers };
    return Promise.resolve();
  }

  private authHeaders(): Record<string, string> {
    const { token, impersonate } = this.credentials;
    const bearer = token?.();
    return {
      ...(bearer ? { Authorization: `Bearer ${bearer}` } : {}),
      ...(impersonate === undefined ? {} : { "Impersonate-User": impersonate }),
    };
  }
}

function headerMap({ headers }: https.RequestOptions): OutgoingHttpHeaders {
  if (headers === undefined) return {};
  if (!isHeaderMap(headers)) {
    throw new TypeError("request headers as a raw array cannot take auth headers");
  }
  return headers;
}

const isHeaderMap = (
  headers: OutgoingHttpHeaders | readonly string[],
): headers is OutgoingHttpHeaders => !Array.isArray(headers);

/** For `exec`, `auth-provider` and `proxy-url`: client-node does the work, loaded on first use. */
class ClientNodeSource implements KubeConfigSource {
  private loaded: Promise<KubeConfigSource> | undefined;

  constructor(
    private readonly cluster: ClusterInfo,
    /** The current context, its cluster and user, with paths already absolute. */
    private readonly kubeconfig: object,
  ) {}

  getCurrentCluster(): ClusterInfo {
    return this.cluster;
  }

  async applyToHTTPSOptions(options: https.RequestOptions): Promise<void> {
    this.loaded ??= import("@kubernetes/client-node").then(({ KubeConfig }) => {
      const kc = new KubeConfig();
      // JSON is YAML: client-node parses the document as it would a kubeconfig file.
      kc.loadFromString(JSON.stringify(this.kubeconfig));
      return kc;
    });
    await (await this.loaded).applyToHTTPSOptions(options);
  }
}
