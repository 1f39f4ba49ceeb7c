// Throwaway X.509 material for the local control plane, made with the openssl CLI (OpenSSL 3.0+).
// Keys are ECDSA P-256 and certificates live two days: they exist only for one test run.
import { execFile } from "node:child_process";
import { readFile, writeFile } from "node:fs/promises";
import path from "node:path";
import { promisify } from "node:util";

const run = promisify(execFile);

export interface CertificateAuthority {
  readonly certPath: string;
  readonly keyPath: string;
  readonly certPem: string;
}

export interface IssuedCertificate {
  readonly certPath: string;
  readonly keyPath: string;
  readonly certPem: string;
  readonly keyPem: string;
  /** PEM of the CA that signed it: what a client trusts, e.g. a webhook's caBundle (base64). */
  readonly caPem: string;
}

export interface CertificateRequest {
  /** File name stem inside the directory: <name>.crt and <name>.key. */
  readonly name: string;
  readonly commonName: string;
  /** Subject organisations; for client certificates these become Kubernetes groups. */
  readonly organizations?: readonly string[];
  /** Subject alternative names (server certificates). */
  readonly ips?: readonly string[];
  readonly dnsNames?: readonly string[];
  readonly usage: "server" | "client";
}

// `openssl req` needs a config file; an empty one keeps the distro defaults (extra v3_ca
// extensions, prompts) out of the way, so every extension below is the only one of its kind.
async function minimalConfig(dir: string): Promise<string> {
  const file = path.join(dir, "openssl.cnf");
  await writeFile(file, "[req]\ndistinguished_name = dn\n[dn]\n");
  return file;
}

function subject(commonName: string, organizations: readonly string[] = []): string {
  const escape = (value: string): string => value.replace(/[/\\=+,]/g, (c) => `\\${c}`);
  return organizations.map((o) => `/O=${escape(o)}`).join("") + `/CN=${escape(commonName)}`;
}

async function openssl(args: readonly string[]): Promise<void> {
  try {
    await run("openssl", args, { timeout: 30_000 });
  } catch (error) {
    const detail = error instanceof Error ? error.message : String(error);
    throw new Error(
      `openssl ${args.slice(0, 2).join(" ")} failed (is the openssl CLI 3.0+ installed?): ${detail}`,
    );
  }
}

const ecKey = ["-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes"];

/**
 * `openssl req -x509` with a fresh P-256 key into `<dir>/<name>.key` and a two-day certificate
 * into `<dir>/<name>.crt`; `extra` adds the signer (-CA/-CAkey) and extensions.
 */
async function newKeyAndCertificate(
  dir: string,
  name: string,
  subj: string,
  extra: readonly string[],
): Promise<{ certPath: string; keyPath: string }> {
  const config = await minimalConfig(dir);
  const certPath = path.join(dir, `${name}.crt`);
  const keyPath = path.join(dir, `${name}.key`);
  await openssl([
    "req",
    "-config",
    config,
    "-x509",
    ...ecKey,
    "-keyout",
    keyPath,
    "-out",
    certPath,
    "-days",
    "2",
    "-subj",
    subj,
    ...extra,
  ]);
  return { certPath, keyPath };
}

export async function createCertificateAuthority(
  dir: string,
  commonName: string,
): Promise<CertificateAuthority> {
  const { certPath, keyPath } = await newKeyAndCertificate(dir, "ca", subject(commonName), [
    "-addext",
    "basicConstraints=critical,CA:TRUE",
    "-addext",
    "keyUsage=critical,keyCertSign,cRLSign",
  ]);
  return { certPath, keyPath, certPem: await readFile(certPath, "utf8") };
}

export async function issueCertificate(
  ca: CertificateAuthority,
  dir: string,
  request: CertificateRequest,
): Promise<IssuedCertificate> {
  const sans = [
    ...(request.ips ?? []).map((ip) => `IP:${ip}`),
    ...(request.dnsNames ?? []).map((d) => `DNS:${d}`),
  ];
  const extensions = [
    `extendedKeyUsage=${request.usage === "server" ? "serverAuth" : "clientAuth"}`,
    "basicConstraints=critical,CA:FALSE",
    "keyUsage=critical,digitalSignature,keyEncipherment",
    ...(sans.length > 0 ? [`subjectAltName=${sans.join(",")}`] : []),
  ];
  const { certPath, keyPath } = await newKeyAndCertificate(
    dir,
    request.name,
    subject(request.commonName, request.organizations),
    ["-CA", ca.certPath, "-CAkey", ca.keyPath, ...extensions.flatMap((e) => ["-addext", e])],
  );
  const [certPem, keyPem] = await Promise.all([
    readFile(certPath, "utf8"),
    readFile(keyPath, "utf8"),
  ]);
  return { certPath, keyPath, certPem, keyPem, caPem: ca.certPem };
}

/** An ECDSA key pair for signing service-account tokens (kube-apiserver accepts ES256). */
export async function createSigningKeyPair(
  dir: string,
): Promise<{ privatePath: string; publicPath: string }> {
  const privatePath = path.join(dir, "sa.key");
  const publicPath = path.join(dir, "sa.pub");
  await openssl([
    "genpkey",
    "-algorithm",
    "EC",
    "-pkeyopt",
    "ec_paramgen_curve:prime256v1",
    "-out",
    privatePath,
  ]);
  await openssl(["pkey", "-in", privatePath, "-pubout", "-out", publicPath]);
  return { privatePath, publicPath };
}
