/**
 * faas-netes CE's answers, from its own code: runs the renderer dev/openfaas/build.sh builds
 * (dev/openfaas/render/, faas-netes's handlers against a fake cluster) on requests the gateway
 * stand-in received, and checks what it prints.
 */
import { spawn } from "node:child_process";
import * as z from "zod";

/** The Secrets that exist in the function namespace: keys only, never values. */
export interface ProviderSecret {
  readonly name: string;
  readonly keys: readonly string[];
  readonly type?: string;
  readonly labels?: Readonly<Record<string, string>>;
}

/** One request as the gateway forwards it: /system/functions ("deploy") or /system/secrets. */
export interface ProviderRequest {
  readonly kind: "deploy" | "secret";
  readonly method: string;
  readonly query?: string;
  readonly body: string;
}

/** faas-netes's settings (the chart's values) and the state it would read from the cluster. */
export interface ProviderInput {
  readonly namespace: string;
  readonly httpProbe: boolean;
  readonly setNonRootUser: boolean;
  readonly functions: readonly string[];
  readonly secrets: readonly ProviderSecret[];
  readonly requests: readonly ProviderRequest[];
}

const kubeObjectSchema = z.looseObject({
  apiVersion: z.string(),
  kind: z.string(),
  metadata: z.looseObject({ name: z.string(), namespace: z.string().optional() }),
});
export type KubeObject = z.infer<typeof kubeObjectSchema>;

const resultSchema = z.object({
  status: z.number().int().min(100).max(599),
  body: z.string(),
  objects: z.array(kubeObjectSchema),
  notRun: z.array(z.string()).optional(),
});
export type ProviderResult = z.infer<typeof resultSchema>;

const outputSchema = z.object({ results: z.array(resultSchema) });

/** Runs the renderer once on `input`; one result per request, in order. */
export function runRenderer(
  binary: string,
  input: ProviderInput,
  timeoutMs = 60_000,
): Promise<ProviderResult[]> {
  return new Promise((resolve, reject) => {
    const child = spawn(binary, [], { stdio: ["pipe", "pipe", "pipe"], timeout: timeoutMs });
    const out: Buffer[] = [];
    const err: Buffer[] = [];
    child.stdout.on("data", (chunk: Buffer) => out.push(chunk));
    child.stderr.on("data", (chunk: Buffer) => err.push(chunk));
    child.once("error", reject);
    child.once("close", (code, signal) => {
      // faas-netes's own log lines (no Secret values) and our error, if any.
      const stderr = Buffer.concat(err).toString("utf8").trim();
      if (code !== 0) {
        reject(new Error(`${binary} ended with ${signal ?? `exit ${code ?? "?"}`}: ${stderr}`));
        return;
      }
      try {
        const parsed = outputSchema.parse(JSON.parse(Buffer.concat(out).toString("utf8")));
        if (parsed.results.length !== input.requests.length) {
          throw new Error(`${parsed.results.length} results for ${input.requests.length} requests`);
        }
        resolve(parsed.results);
      } catch (error) {
        reject(new Error(`${binary} printed an unusable answer: ${String(error)}`));
      }
    });
    child.stdin.end(JSON.stringify(input));
  });
}
