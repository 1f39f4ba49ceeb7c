/**
 * CNF login credentials. The password lives in a private field and leaves only through the
 * login form body; JSON, String() and util.inspect show it as redacted, so it cannot reach a
 * log line or an error message by accident.
 */
import { readFileSync } from "node:fs";
import { inspect } from "node:util";
import { CnfConfigError } from "./errors.js";

export const REDACTED = "[redacted]";

export class CnfCredentials {
  readonly #password: string;

  constructor(
    readonly username: string,
    password: string,
  ) {
    this.#password = password;
  }

  /** The body of LuCI's login POST (application/x-www-form-urlencoded). */
  loginForm(): string {
    return new URLSearchParams({
      luci_username: this.username,
      luci_password: this.#password,
    }).toString();
  }

  toJSON(): { username: string; password: string } {
    return { username: this.username, password: REDACTED };
  }

  toString(): string {
    return `CnfCredentials(${this.username}, password ${REDACTED})`;
  }

  [inspect.custom](): string {
    return this.toString();
  }
}

export type Env = Readonly<Record<string, string | undefined>>;
export type ReadTextFile = (path: string) => string;

const readText: ReadTextFile = (path) => readFileSync(path, "utf8");

/**
 * Credentials from the environment, as mounted from a Secret:
 * CNF_USERNAME_FILE or CNF_USERNAME (default "root", as upstream), CNF_PASSWORD_FILE or
 * CNF_PASSWORD (default "", the DESIGN-era CNF's empty root password). A file wins over the
 * plain variable; one trailing newline is dropped.
 */
export function cnfCredentialsFromEnv(env: Env, readFile: ReadTextFile = readText): CnfCredentials {
  const username = fromFileOrEnv(env, "CNF_USERNAME", readFile) ?? "root";
  const password = fromFileOrEnv(env, "CNF_PASSWORD", readFile) ?? "";
  if (username.trim() === "") throw new CnfConfigError("CNF username is empty (CNF_USERNAME)");
  return new CnfCredentials(username, password);
}

function fromFileOrEnv(env: Env, name: string, readFile: ReadTextFile): string | undefined {
  const path = env[`${name}_FILE`];
  if (path !== undefined && path !== "") {
    try {
      return readFile(path).replace(/\r?\n$/, "");
    } catch (error) {
      // The path is configuration, not a secret; the file's content never appears.
      throw new CnfConfigError(
        `cannot read ${name}_FILE ${path}: ${(error as NodeJS.ErrnoException).code ?? "error"}`,
      );
    }
  }
  return env[name];
}

/**
 * Credentials from the data of the Secret the functions mount (base64 values, as the API returns
 * them): key `password`, and `username` when present, else CNF_USERNAME, else "root". What a
 * preview reads through the API, where the functions read the mounted file.
 */
export function cnfCredentialsFromSecretData(
  data: Readonly<Record<string, string>> | undefined,
  env: Env,
): CnfCredentials {
  const decode = (key: string): string | undefined => {
    const value = data?.[key];
    return value === undefined ? undefined : Buffer.from(value, "base64").toString("utf8");
  };
  const username = decode("username") ?? env["CNF_USERNAME"] ?? "root";
  if (username.trim() === "")
    throw new CnfConfigError("CNF username is empty (Secret key username)");
  return new CnfCredentials(username, decode("password") ?? "");
}

/** The PEM CA bundle for https CNFs, from CNF_CA_FILE; undefined when unset. */
export function cnfCaFromEnv(env: Env, readFile: ReadTextFile = readText): string | undefined {
  const path = env["CNF_CA_FILE"];
  if (path === undefined || path === "") return undefined;
  try {
    return readFile(path);
  } catch (error) {
    throw new CnfConfigError(
      `cannot read CNF_CA_FILE ${path}: ${(error as NodeJS.ErrnoException).code ?? "error"}`,
    );
  }
}
