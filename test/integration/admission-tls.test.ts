// validate-admission serves TLS itself: the certificate comes from files and a renewed pair is
// picked up for new connections without a restart; a half-written pair never replaces a good one.
import { copyFile, mkdtemp } from "node:fs/promises";
import path from "node:path";
import { connect, type PeerCertificate } from "node:tls";
import { pollUntil } from "../../dev/control-plane/api.js";
import {
  createCertificateAuthority,
  issueCertificate,
  type IssuedCertificate,
} from "../../dev/control-plane/certs.js";
import type { AdmissionReader } from "../../shared/admission/observe.js";
import { Runtime, createLogger } from "../../shared/runtime/index.js";
import {
  serveValidateAdmission,
  type AdmissionServer,
} from "../../functions/validate-admission/serve.js";
import { clusterInfo } from "./support/cluster.js";

const nothingToRead: AdmissionReader = {
  listCnfDeployments: () => Promise.resolve([]),
  getRule: () => Promise.resolve(null),
  listRules: () => Promise.resolve([]),
  listRoleBindings: () => Promise.resolve([]),
  listClusterRoleBindings: () => Promise.resolve([]),
  getRole: () => Promise.resolve(null),
  mayGetSecret: () => Promise.resolve(false),
};

function servedCertificate(port: number, caPem: string): Promise<PeerCertificate> {
  return new Promise((resolve, reject) => {
    const socket = connect({ host: "127.0.0.1", port, ca: caPem }, () => {
      resolve(socket.getPeerCertificate());
      socket.end();
    });
    socket.once("error", reject);
  });
}

describe("validate-admission's own TLS", () => {
  let dir: string;
  let first: IssuedCertificate;
  let second: IssuedCertificate;
  let caPem: string;
  let server: AdmissionServer;
  const live = { certFile: "", keyFile: "" };

  beforeAll(async () => {
    dir = await mkdtemp(path.join(clusterInfo().dir, "admission-tls-"));
    const ca = await createCertificateAuthority(dir, "admission-tls-test-ca");
    caPem = ca.certPem;
    const serving = (name: string) =>
      issueCertificate(ca, dir, { name, commonName: name, usage: "server", ips: ["127.0.0.1"] });
    [first, second] = [await serving("first"), await serving("second")];
    live.certFile = path.join(dir, "tls.crt");
    live.keyFile = path.join(dir, "tls.key");
    await copyFile(first.certPath, live.certFile);
    await copyFile(first.keyPath, live.keyFile);
    server = await serveValidateAdmission({
      port: 0,
      host: "127.0.0.1",
      tls: live,
      reader: nothingToRead,
      runtime: new Runtime({ logger: createLogger({ level: "silent" }) }),
      tlsPollMs: 50,
    });
  }, 30_000);

  afterAll(async () => {
    await server?.close();
  });

  it("serves the certificate from its files and switches to a renewed pair without a restart", async () => {
    expect((await servedCertificate(server.running.port, caPem)).subject.CN).toBe("first");
    // A renewal that lands the certificate before its key is not a valid pair yet: keep serving.
    await copyFile(second.certPath, live.certFile);
    expect(await server.tls.reload()).toBe("invalid");
    expect((await servedCertificate(server.running.port, caPem)).subject.CN).toBe("first");
    await copyFile(second.keyPath, live.keyFile);
    await pollUntil(
      async () =>
        (await servedCertificate(server.running.port, caPem)).subject.CN === "second"
          ? true
          : undefined,
      () => "the renewed certificate to be served",
      { timeoutMs: 10_000, intervalMs: 50 },
    );
  });
});
