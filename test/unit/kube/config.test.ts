// shared/kube's kubeconfig reader on kubeconfig files in a temporary directory: which source
// wins, how KUBECONFIG files merge, relative paths, the in-cluster service account and its
// rotating token, the errors a broken kubeconfig gives, and exec users handed to client-node.
import { jest } from "@jest/globals";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import type https from "node:https";
import { tmpdir } from "node:os";
import path from "node:path";
import { stringify } from "yaml";
import {
  CREDENTIAL_FILE_REFRESH_MS,
  loadKubeConfig,
  type KubeConfigSource,
  type LoadKubeConfigOptions,
} from "../../../shared/kube/config.js";

let root: string;
beforeEach(() => {
  root = mkdtempSync(path.join(tmpdir(), "kubeconfig-"));
});
afterEach(() => {
  rmSync(root, { recursive: true, force: true });
});

/** Writes `content` (an object as YAML, or text) at root/<relative>, making its directories. */
function write(relative: string, content: object | string): string {
  const file = path.join(root, relative);
  mkdirSync(path.dirname(file), { recursive: true });
  writeFileSync(file, typeof content === "string" ? content : stringify(content));
  return file;
}

const b64 = (text: string): string => Buffer.from(text).toString("base64");

interface KubeconfigParts {
  readonly clusters?: Record<string, object>;
  readonly users?: Record<string, object | null>;
  readonly contexts?: Record<string, object>;
  readonly currentContext?: string;
}

function kubeconfig({ clusters = {}, users = {}, contexts = {}, currentContext }: KubeconfigParts) {
  return {
    apiVersion: "v1",
    kind: "Config",
    clusters: Object.entries(clusters).map(([name, cluster]) => ({ name, cluster })),
    users: Object.entries(users).map(([name, user]) => ({ name, user })),
    contexts: Object.entries(contexts).map(([name, context]) => ({ name, context })),
    ...(currentContext === undefined ? {} : { "current-context": currentContext }),
  };
}

/** One cluster, one user, one context that is current. */
const single = (cluster: object, user: object | null = {}) =>
  kubeconfig({
    clusters: { c: cluster },
    users: { u: user },
    contexts: { ctx: { cluster: "c", user: "u" } },
    currentContext: "ctx",
  });

/** No ~/.kube/config and no service account unless a test puts them under root. */
const isolated = (env: Record<string, string>, more: LoadKubeConfigOptions = {}) => ({
  env,
  homeDir: path.join(root, "home"),
  serviceAccountDir: path.join(root, "serviceaccount"),
  ...more,
});

async function requestOptions(source: KubeConfigSource): Promise<https.RequestOptions> {
  const options: https.RequestOptions = { headers: { Accept: "application/json" } };
  await source.applyToHTTPSOptions(options);
  return options;
}

describe("a kubeconfig with inline credentials", () => {
  it("gives the server without a trailing slash, the CA, the client pair and the token", async () => {
    const file = write(
      "config",
      single(
        { server: "https://127.0.0.1:6443/", "certificate-authority-data": b64("CA PEM") },
        {
          "client-certificate-data": b64("CERT PEM"),
          "client-key-data": b64("KEY PEM"),
          token: "t0ken",
        },
      ),
    );
    const source = loadKubeConfig(isolated({ KUBECONFIG: file }));

    expect(source.getCurrentCluster()).toEqual({ server: "https://127.0.0.1:6443" });
    expect(await requestOptions(source)).toEqual({
      ca: "CA PEM",
      cert: "CERT PEM",
      key: "KEY PEM",
      headers: { Accept: "application/json", Authorization: "Bearer t0ken" },
    });
  });

  it("skips TLS verification, names the TLS server, impersonates and uses basic auth as told", async () => {
    const file = write(
      "config",
      single(
        {
          server: "https://100.65.0.1",
          "insecure-skip-tls-verify": true,
          "tls-server-name": "kubernetes.default",
        },
        { username: "alice", password: "s3cret", as: "bob" },
      ),
    );

    expect(await requestOptions(loadKubeConfig(isolated({ KUBECONFIG: file })))).toEqual({
      rejectUnauthorized: false,
      servername: "kubernetes.default",
      auth: "alice:s3cret",
      headers: { Accept: "application/json", "Impersonate-User": "bob" },
    });
  });

  it("a context without a user, or a user written as null, is anonymous", async () => {
    const anonymous = write(
      "anonymous",
      kubeconfig({
        clusters: { c: { server: "https://100.65.0.1" } },
        contexts: { ctx: { cluster: "c" } },
        currentContext: "ctx",
      }),
    );
    const nullUser = write("null-user", single({ server: "https://100.65.0.1" }, null));

    for (const file of [anonymous, nullUser]) {
      expect(await requestOptions(loadKubeConfig(isolated({ KUBECONFIG: file })))).toEqual({
        headers: { Accept: "application/json" },
      });
    }
  });
});

describe("credential files named in a kubeconfig", () => {
  it("resolve relative to the kubeconfig's directory, not the working directory", async () => {
    write("cluster/ca.pem", "CA FROM FILE\n");
    write("cluster/certs/client.pem", "CERT FROM FILE");
    write("key.pem", "KEY FROM FILE");
    write("cluster/token", "file-token\n");
    const file = write(
      "cluster/config",
      single(
        { server: "https://127.0.0.1:6443", "certificate-authority": "ca.pem" },
        {
          "client-certificate": "certs/client.pem",
          "client-key": "../key.pem",
          tokenFile: "token",
        },
      ),
    );

    expect(await requestOptions(loadKubeConfig(isolated({ KUBECONFIG: file })))).toEqual({
      ca: "CA FROM FILE",
      cert: "CERT FROM FILE",
      key: "KEY FROM FILE",
      headers: { Accept: "application/json", Authorization: "Bearer file-token" },
    });
  });

  it("an inline token wins over a tokenFile, as in kubectl", async () => {
    write("token", "from-file");
    const file = write(
      "config",
      single({ server: "https://100.65.0.1" }, { token: "inline", tokenFile: "token" }),
    );

    const options = await requestOptions(loadKubeConfig(isolated({ KUBECONFIG: file })));
    expect(options.headers).toEqual({ Accept: "application/json", Authorization: "Bearer inline" });
  });

  it("a credential file that does not exist fails at load, naming the file", () => {
    const file = write(
      "config",
      single({ server: "https://100.65.0.1", "certificate-authority": "missing-ca.pem" }),
    );

    expect(() => loadKubeConfig(isolated({ KUBECONFIG: file }))).toThrow(
      path.join(root, "missing-ca.pem"),
    );
  });
});

describe("KUBECONFIG with several files, merged as kubectl merges them", () => {
  it("the first file to define a name wins, and current-context comes from the first that sets it", async () => {
    const first = write(
      "first",
      kubeconfig({
        clusters: { shared: { server: "https://first.example:6443" } },
        users: { admin: { token: "first-token" } },
      }),
    );
    const second = write(
      "second",
      kubeconfig({
        clusters: {
          shared: { server: "https://second.example:6443" },
          other: { server: "https://other.example" },
        },
        contexts: { work: { cluster: "shared", user: "admin" } },
        currentContext: "work",
      }),
    );
    const third = write(
      "third",
      kubeconfig({
        users: { admin: { token: "third-token" } },
        contexts: { play: { cluster: "other", user: "admin" } },
        currentContext: "play",
      }),
    );
    const list = [first, path.join(root, "does-not-exist"), second, third].join(path.delimiter);

    const source = loadKubeConfig(isolated({ KUBECONFIG: list }));

    expect(source.getCurrentCluster()).toEqual({ server: "https://first.example:6443" });
    expect((await requestOptions(source)).headers).toEqual({
      Accept: "application/json",
      Authorization: "Bearer first-token",
    });
  });

  it("a list in which no file exists is an error, not a silent fallback to ~/.kube/config", () => {
    write("home/.kube/config", single({ server: "https://home.example" }));

    expect(() => loadKubeConfig(isolated({ KUBECONFIG: path.join(root, "nowhere") }))).toThrow(
      /KUBECONFIG names no file that exists/,
    );
  });
});

describe("which source wins", () => {
  beforeEach(() => {
    write("kubeconfig", single({ server: "https://from-kubeconfig-env" }));
    write("home/.kube/config", single({ server: "https://from-home" }));
    write("serviceaccount/token", "sa-token");
    write("serviceaccount/ca.crt", "SA CA");
  });
  const inPod = { KUBERNETES_SERVICE_HOST: "100.65.0.1", KUBERNETES_SERVICE_PORT: "443" };
  const serverOf = (options: LoadKubeConfigOptions): string | undefined =>
    loadKubeConfig(options).getCurrentCluster()?.server;

  it("KUBECONFIG first, even in a pod", () => {
    expect(serverOf(isolated({ ...inPod, KUBECONFIG: path.join(root, "kubeconfig") }))).toBe(
      "https://from-kubeconfig-env",
    );
  });

  it("then ~/.kube/config (an empty KUBECONFIG counts as unset)", () => {
    expect(serverOf(isolated({ ...inPod, KUBECONFIG: "" }))).toBe("https://from-home");
  });

  it("then the pod's service account", () => {
    rmSync(path.join(root, "home"), { recursive: true });
    expect(serverOf(isolated(inPod))).toBe("https://100.65.0.1:443");
  });

  it("and with none of them, a clear error", () => {
    rmSync(path.join(root, "home"), { recursive: true });
    rmSync(path.join(root, "serviceaccount"), { recursive: true });
    expect(() => serverOf(isolated(inPod))).toThrow(/no Kubernetes API server configured/);
  });
});

describe("in a pod, with the service account", () => {
  const inPod = { KUBERNETES_SERVICE_HOST: "fd00::1", KUBERNETES_SERVICE_PORT: "6443" };
  beforeEach(() => {
    write("serviceaccount/token", "token-1\n");
    write("serviceaccount/ca.crt", "CLUSTER CA");
  });

  it("talks HTTPS to the service address (an IPv6 one in brackets) with the CA and token", async () => {
    const source = loadKubeConfig(isolated(inPod));

    expect(source.getCurrentCluster()).toEqual({ server: "https://[fd00::1]:6443" });
    expect(await requestOptions(source)).toEqual({
      ca: "CLUSTER CA",
      headers: { Accept: "application/json", Authorization: "Bearer token-1" },
    });
  });

  it("re-reads the token once the last read is a minute old, so a rotated token is used", async () => {
    let now = 1_000_000;
    const source = loadKubeConfig(isolated(inPod, { now: () => now }));
    const bearer = async (): Promise<unknown> => (await requestOptions(source)).headers;

    write("serviceaccount/token", "token-2\n");
    now += CREDENTIAL_FILE_REFRESH_MS - 1;
    expect(await bearer()).toMatchObject({ Authorization: "Bearer token-1" });

    now += 1;
    expect(await bearer()).toMatchObject({ Authorization: "Bearer token-2" });
  });

  it("without KUBERNETES_SERVICE_HOST/PORT it says what is missing", () => {
    expect(() => loadKubeConfig(isolated({}))).toThrow(/KUBERNETES_SERVICE_HOST\/PORT are not set/);
  });
});

describe("a broken kubeconfig is refused with the reason", () => {
  it.each([
    [
      "no current-context",
      kubeconfig({ clusters: { c: { server: "https://x" } }, contexts: { ctx: { cluster: "c" } } }),
      /sets no current-context/,
    ],
    [
      "a current-context that is not defined",
      kubeconfig({ clusters: { c: { server: "https://x" } }, currentContext: "gone" }),
      /current-context "gone" is not among its contexts/,
    ],
    [
      "a context naming a cluster that is not defined",
      kubeconfig({ contexts: { ctx: { cluster: "gone" } }, currentContext: "ctx" }),
      /names cluster "gone", which is not defined/,
    ],
    [
      "a context naming a user that is not defined",
      kubeconfig({
        clusters: { c: { server: "https://x" } },
        contexts: { ctx: { cluster: "c", user: "gone" } },
        currentContext: "ctx",
      }),
      /names user "gone", which is not defined/,
    ],
    ["a cluster without a server", single({ "insecure-skip-tls-verify": true }), /not valid/],
  ])("%s", (_title, content, message) => {
    const file = write("config", content);
    expect(() => loadKubeConfig(isolated({ KUBECONFIG: file }))).toThrow(message);
  });

  it("YAML that does not parse: the error gives the position, never the line (it may hold a token)", () => {
    const file = write("config", "users:\n- name: u\n  user:\n    token: abc: s3cret-token\n");

    const load = (): unknown => loadKubeConfig(isolated({ KUBECONFIG: file }));

    expect(load).toThrow(`kubeconfig ${file} is not valid YAML (line 4, column 12)`);
    expect(load).not.toThrow(/s3cret/);
  });
});

describe("what shared/kube does not implement is handed to @kubernetes/client-node", () => {
  // Loading client-node alone takes about a second, several on a loaded 2-core machine.
  jest.setTimeout(30_000);

  it("an exec user: client-node runs the plugin for the token", async () => {
    const credential = {
      apiVersion: "client.authentication.k8s.io/v1",
      kind: "ExecCredential",
      status: { token: "from-exec-plugin" },
    };
    const file = write(
      "config",
      single(
        { server: "https://100.65.0.1", "certificate-authority-data": b64("CA PEM") },
        {
          exec: {
            apiVersion: "client.authentication.k8s.io/v1",
            command: process.execPath,
            args: ["-e", `console.log(${JSON.stringify(JSON.stringify(credential))})`],
            interactiveMode: "Never",
          },
        },
      ),
    );
    const source = loadKubeConfig(isolated({ KUBECONFIG: file }));

    expect(source.getCurrentCluster()).toEqual({ server: "https://100.65.0.1" });
    const options = await requestOptions(source);
    expect(options.headers).toEqual({
      Accept: "application/json",
      Authorization: "Bearer from-exec-plugin",
    });
    expect(String(options.ca)).toBe("CA PEM");
  });

  it("so is a cluster behind a proxy-url: client-node supplies the proxy agent", async () => {
    const file = write(
      "config",
      single(
        { server: "https://100.65.0.1", "proxy-url": "http://127.0.0.1:3128" },
        { token: "t0ken" },
      ),
    );
    const source = loadKubeConfig(isolated({ KUBECONFIG: file }));

    expect(source.getCurrentCluster()).toEqual({
      server: "https://100.65.0.1",
      proxyUrl: "http://127.0.0.1:3128",
    });
    const options = await requestOptions(source);
    expect(options.headers).toMatchObject({ Authorization: "Bearer t0ken" });
    expect(options.agent).toBeDefined();
  });
});
