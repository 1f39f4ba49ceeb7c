import {
  CNF_PORT_ANNOTATION,
  CNF_SCHEME_ANNOTATION,
  CnfConfigError,
  DEFAULT_CNF_TUNING,
  cnfBaseUrl,
  cnfCaFromEnv,
  cnfClientTuningFromEnv,
  cnfCredentialsFromEnv,
  cnfCredentialsFromSecretData,
  cnfEndpointConfig,
} from "../../../shared/cnf/index.js";

describe("cnfEndpointConfig: scheme and port from env and Deployment annotations", () => {
  it.each<[string, Record<string, string>, Record<string, string> | null, { scheme: string; port: number }]>([
    ["nothing set: http on 80, as upstream DESIGN", {}, null, { scheme: "http", port: 80 }],
    ["CNF_PORT", { CNF_PORT: "8080" }, null, { scheme: "http", port: 8080 }],
    ["https without a port: 443, as upstream HEAD", { CNF_SCHEME: "https" }, {}, { scheme: "https", port: 443 }],
    ["scheme is case-insensitive", { CNF_SCHEME: "HTTPS", CNF_PORT: "8443" }, null, { scheme: "https", port: 8443 }],
    ["annotations win over env", { CNF_PORT: "8080", CNF_SCHEME: "http" }, { [CNF_PORT_ANNOTATION]: "9000", [CNF_SCHEME_ANNOTATION]: "https" }, { scheme: "https", port: 9000 }],
    ["a port annotation alone keeps the env scheme", { CNF_SCHEME: "https" }, { [CNF_PORT_ANNOTATION]: "10443" }, { scheme: "https", port: 10443 }],
    ["empty values mean unset", { CNF_PORT: "", CNF_SCHEME: " " }, null, { scheme: "http", port: 80 }],
  ])("%s", (_case, env, annotations, expected) => {
    expect(cnfEndpointConfig(env, annotations)).toEqual(expected);
  }); // prettier-ignore

  it.each<[string, Record<string, string>, Record<string, string>, RegExp]>([
    ["a non-numeric port annotation", {}, { [CNF_PORT_ANNOTATION]: "http" }, /sdewan.akraino.org\/cnf-port must be a port number 1-65535, got "http"/],
    ["port 0", { CNF_PORT: "0" }, {}, /CNF_PORT must be a port number/],
    ["port above 65535", { CNF_PORT: "70000" }, {}, /CNF_PORT must be a port number/],
    ["a fractional port", { CNF_PORT: "80.5" }, {}, /CNF_PORT/],
    ["an unknown scheme", {}, { [CNF_SCHEME_ANNOTATION]: "ftp" }, /sdewan.akraino.org\/cnf-scheme must be http or https, got "ftp"/],
  ])("refuses %s with a CnfConfigError naming the setting", (_case, env, annotations, message) => {
    expect(() => cnfEndpointConfig(env, annotations)).toThrow(CnfConfigError);
    expect(() => cnfEndpointConfig(env, annotations)).toThrow(message);
  }); // prettier-ignore
});

describe("cnfBaseUrl", () => {
  it("builds http://<podIP>:<port>/cgi-bin/luci/", () => {
    expect(cnfBaseUrl({ scheme: "http", port: 80 }, "10.244.1.7")).toBe(
      "http://10.244.1.7:80/cgi-bin/luci/",
    );
    expect(cnfBaseUrl({ scheme: "https", port: 8443 }, "127.0.0.2")).toBe(
      "https://127.0.0.2:8443/cgi-bin/luci/",
    );
  });

  it("brackets an IPv6 pod IP", () => {
    expect(cnfBaseUrl({ scheme: "http", port: 80 }, "fd00::5")).toBe(
      "http://[fd00::5]:80/cgi-bin/luci/",
    );
  });

  it("refuses something that is not an IP", () => {
    expect(() => cnfBaseUrl({ scheme: "http", port: 80 }, "cnf.example")).toThrow(CnfConfigError);
  });
});

describe("cnfClientTuningFromEnv", () => {
  it("uses the defaults: a retry budget well under a second", () => {
    expect(cnfClientTuningFromEnv({})).toEqual(DEFAULT_CNF_TUNING);
    expect(DEFAULT_CNF_TUNING.retry.budgetMs).toBeLessThan(1000);
  });

  it("reads the knobs from the environment", () => {
    const tuning = cnfClientTuningFromEnv({
      CNF_TIMEOUT_MS: "300",
      CNF_RETRIES: "0",
      CNF_RETRY_BUDGET_MS: "100",
    });
    expect(tuning).toMatchObject({ timeoutMs: 300, retry: { retries: 0, budgetMs: 100 } });
    const paced = cnfClientTuningFromEnv({ CNF_RESTART_MIN_INTERVAL_MS: "10000" });
    expect(paced.restartPacing).toEqual({ minIntervalMs: 10_000, quietMs: 1000 });
  });

  it("refuses nonsense", () => {
    expect(() => cnfClientTuningFromEnv({ CNF_RETRIES: "-1" })).toThrow(
      /CNF_RETRIES must be an integer >= 0/,
    );
    expect(() => cnfClientTuningFromEnv({ CNF_RESTART_QUIET_MS: "soon" })).toThrow(
      /CNF_RESTART_QUIET_MS must be an integer >= 0/,
    );
  });
});

describe("cnfCredentialsFromEnv", () => {
  const files: Record<string, string> = {
    "/secret/password": "from-file\n",
    "/secret/user": "admin\n",
  };
  const readFile = (path: string): string => {
    const content = files[path];
    if (content === undefined) throw Object.assign(new Error("nope"), { code: "ENOENT" });
    return content;
  };

  it("defaults to root with the empty password, as the DESIGN-era CNF", () => {
    const credentials = cnfCredentialsFromEnv({}, readFile);
    expect(credentials.username).toBe("root");
    expect(credentials.loginForm()).toBe("luci_username=root&luci_password=");
  });

  it("prefers the Secret files over plain variables and drops the trailing newline", () => {
    const credentials = cnfCredentialsFromEnv(
      {
        CNF_PASSWORD: "from-env",
        CNF_PASSWORD_FILE: "/secret/password",
        CNF_USERNAME_FILE: "/secret/user",
      },
      readFile,
    );
    expect(credentials.username).toBe("admin");
    expect(credentials.loginForm()).toBe("luci_username=admin&luci_password=from-file");
  });

  it("reads CNF_USERNAME / CNF_PASSWORD", () => {
    expect(
      cnfCredentialsFromEnv({ CNF_USERNAME: "op", CNF_PASSWORD: "p&w" }, readFile).loginForm(),
    ).toBe("luci_username=op&luci_password=p%26w");
  });

  it("names an unreadable file without showing anything of its content", () => {
    expect(() => cnfCredentialsFromEnv({ CNF_PASSWORD_FILE: "/missing" }, readFile)).toThrow(
      "cannot read CNF_PASSWORD_FILE /missing: ENOENT",
    );
  });
});

describe("cnfCredentialsFromSecretData: the login a preview reads from the credentials Secret", () => {
  const b64 = (text: string) => Buffer.from(text).toString("base64");

  it("takes password and username from the Secret's data", () => {
    const credentials = cnfCredentialsFromSecretData(
      { username: b64("op"), password: b64("p&w") },
      { CNF_USERNAME: "ignored" },
    );
    expect(credentials.loginForm()).toBe("luci_username=op&luci_password=p%26w");
  });

  it("without a username key: CNF_USERNAME, else root, as the functions log in", () => {
    expect(
      cnfCredentialsFromSecretData({ password: b64("pw") }, { CNF_USERNAME: "op" }).username,
    ).toBe("op");
    expect(cnfCredentialsFromSecretData({ password: b64("pw") }, {}).username).toBe("root");
  });

  it("never shows the password in JSON or text", () => {
    const credentials = cnfCredentialsFromSecretData({ password: b64("s3cret-pw") }, {});
    expect(`${JSON.stringify(credentials)} ${String(credentials)}`).not.toContain("s3cret-pw");
  });
});

describe("cnfCaFromEnv", () => {
  it("reads the CA bundle named by CNF_CA_FILE, or nothing when unset", () => {
    expect(cnfCaFromEnv({}, () => "unused")).toBeUndefined();
    expect(cnfCaFromEnv({ CNF_CA_FILE: "/ca/ca.crt" }, () => "-----BEGIN CERTIFICATE-----")).toBe(
      "-----BEGIN CERTIFICATE-----",
    );
  });
});
