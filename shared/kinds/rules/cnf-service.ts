/**
 * CNFService (reference 1.1, 2.3, 2.4 `svc`): DNAT from a CNF port to an in-cluster Service.
 * The CNF has no PUT for it (405), so a change is a DELETE followed by a POST, and no
 * service restart follows (the CNF runs iptables directly).
 */
import * as z from "zod";
import { bodyFromShape, type CnfObject, type CnfShape } from "../cnf-shape.js";
import { defineRuleKind, type RuleKindEntry } from "../entry.js";
import { FIELD_LIMITS, bounded } from "./fields.js";

const port = (description: string) =>
  bounded(5)
    .regex(/^[0-9]+$/, { message: 'must be a port number written as a string, e.g. "8080"' })
    .refine((p) => Number(p) >= 1 && Number(p) <= 65534, { message: "must be between 1 and 65534" })
    .describe(description);

const cnfServiceSpecSchema = () =>
  z
    .strictObject({
      fullname: bounded(FIELD_LIMITS.kubeName)
        .regex(/^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/, {
          message: "must be a DNS name such as httpd-svc.default.svc.cluster.local",
        })
        .describe(
          "DNS name of the target Service, e.g. httpd-svc.default.svc.cluster.local; the CNF resolves it.",
        ),
      port: port("Port the CNF exposes; requests to it are forwarded to the Service (1-65534)."),
      dport: port("Port of the target Service (1-65534)."),
    })
    .describe("Forwards a CNF port to an in-cluster Service.");
export type CnfServiceSpec = z.infer<ReturnType<typeof cnfServiceSpecSchema>>;

const cnfServiceShape: CnfShape = { scalars: ["fullname", "port", "dport"] };

export const cnfService: RuleKindEntry = defineRuleKind<CnfServiceSpec>({
  kind: "CNFService",
  plural: "cnfservices",
  shortNames: ["cnfsvc"],
  finalizer: "rule.finalizers.sdewan.akraino.org",
  description:
    "CNFService forwards a port of every pod of the CNF labelled with the same sdewanPurpose to an in-cluster Service.",
  specSchema: cnfServiceSpecSchema,
  cnf: {
    module: "service",
    collection: "services",
    restartService: null,
    update: "delete-then-create",
    shape: cnfServiceShape,
  },
  dependsOn: [],
  applyRank: 0,
  nameRule: null,
  references: () => [],
  toCnf: (name, spec): CnfObject => ({ ...bodyFromShape(cnfServiceShape, spec), name }),
  example: {
    namePrefix: "svc-",
    spec: (i) => ({
      fullname: `svc-${i}.default.svc.cluster.local`,
      port: String(2000 + i),
      dport: "8080",
    }),
    change: (n) => ({ dport: String(1024 + (n % 60_000)) }),
  },
});
