/**
 * IPsec kinds (reference 1.1, 2.4): proposals (crypto suites) and the two flavours of CNF
 * `remote`: IpsecSite (hub side, local_subnet per connection) and IpsecHost (edge side,
 * local_sourceip per connection). Both share the CNF `remotes` collection.
 */
import * as z from "zod";
import { MIN_KEY_LENGTH } from "../../core/redact.js";
import { bodyFromShape, type CnfObject, type CnfRecord, type CnfShape } from "../cnf-shape.js";
import { defineRuleKind, type RuleKindEntry, type RuleReference } from "../entry.js";
import {
  FIELD_LIMITS,
  IPSEC_NAME_MAX,
  IPSEC_NAME_RULE,
  bounded,
  exampleOctets,
  flag,
  nameList,
  opt,
  peerAddress,
  req,
  secretKeyRef,
  sourceIpList,
  subnetList,
  uciSectionName,
} from "./fields.js";

/** An IpsecProposal name as referenced: it can never be longer than a proposal name may be. */
const proposalName = () => bounded(IPSEC_NAME_MAX).min(1);

// ---- IpsecProposal

const ipsecProposalSpecSchema = () =>
  z
    .strictObject({
      name: opt("Ignored: the proposal is named after metadata.name.", FIELD_LIMITS.kubeName),
      encryption_algorithm: req(
        "strongSwan encryption algorithm, e.g. aes128, aes256, aes128gcm16.",
        FIELD_LIMITS.token,
      ),
      hash_algorithm: req("strongSwan integrity algorithm, e.g. sha1, sha256.", FIELD_LIMITS.token),
      dh_group: req(
        "strongSwan Diffie-Hellman group, e.g. modp2048, ecp256, curve25519.",
        FIELD_LIMITS.token,
      ),
    })
    .describe("An IPsec crypto proposal, referenced by name from IpsecSite and IpsecHost.");
export type IpsecProposalSpec = z.infer<ReturnType<typeof ipsecProposalSpecSchema>>;

const proposalShape: CnfShape = { scalars: ["encryption_algorithm", "hash_algorithm", "dh_group"] };

export const ipsecProposal: RuleKindEntry = defineRuleKind<IpsecProposalSpec>({
  kind: "IpsecProposal",
  plural: "ipsecproposals",
  shortNames: ["ipprop"],
  finalizer: "proposal.finalizers.sdewan.akraino.org",
  description:
    "IpsecProposal is an IPsec crypto proposal applied to every pod of the CNF labelled with the same sdewanPurpose.",
  specSchema: ipsecProposalSpecSchema,
  cnf: {
    module: "ipsec",
    collection: "proposals",
    restartService: "ipsec",
    update: "put",
    shape: proposalShape,
  },
  dependsOn: [],
  applyRank: 0,
  nameRule: IPSEC_NAME_RULE,
  references: () => [],
  toCnf: (name, spec): CnfObject => ({ ...bodyFromShape(proposalShape, spec), name }),
  example: {
    namePrefix: "prop",
    spec: () => ({
      encryption_algorithm: "aes128",
      hash_algorithm: "sha256",
      dh_group: "modp3072",
    }),
    change: (n) => ({ dh_group: n % 2 === 0 ? "modp2048" : "modp3072" }),
  },
});

// ---- Connections

const connectionCommon = () => ({
  name: bounded(IPSEC_NAME_MAX)
    .regex(/^[A-Za-z0-9_]+$/, {
      message: "must be letters, digits and _ only (a UCI section name on the CNF)",
    })
    .describe(
      `Connection name, unique on the CNF (letters, digits, _; at most ${IPSEC_NAME_MAX}).`,
    ),
  conn_type: z.enum(["tunnel", "transport"]).describe("tunnel or transport."),
  mode: z
    .enum(["start", "add", "route"])
    .describe("start (initiate), add (wait) or route (on traffic)."),
  local_updown: opt("Updown script run on the local side."),
  local_firewall: z.enum(["yes", "no"]).optional().describe("yes or no: add local firewall rules."),
  remote_subnet: subnetList()
    .optional()
    .describe("Remote IPv4/IPv6 subnets, comma separated, e.g. 172.12.0.0/24."),
  remote_sourceip: sourceIpList()
    .optional()
    .describe(
      "Virtual IP(s), subnet or range handed out to the peer, e.g. 192.168.1.5-192.168.1.6, or %config.",
    ),
  remote_updown: opt("Updown script run for the remote side."),
  remote_firewall: z
    .enum(["yes", "no"])
    .optional()
    .describe("yes or no: add remote firewall rules."),
  crypto_proposal: nameList(
    "IpsecProposal names for this connection (child SA), in order of preference.",
    proposalName(),
  ).optional(),
  mark: opt("Mark for the connection's traffic.", FIELD_LIMITS.token),
  if_id: opt(
    "XFRM interface id. Accepted for compatibility; the CNF ignores it, so it is not sent.",
    FIELD_LIMITS.token,
  ),
});

const ipsecSiteConnectionSchema = () =>
  z
    .strictObject({
      ...connectionCommon(),
      local_subnet: subnetList()
        .min(1)
        .describe(
          "Local IPv4/IPv6 subnets or addresses, comma separated, e.g. 172.12.0.0/24,10.239.160.22.",
        ),
    })
    .describe("One IPsec connection of a site.");

const ipsecHostConnectionSchema = () =>
  z
    .strictObject({
      ...connectionCommon(),
      local_sourceip: sourceIpList()
        .optional()
        .describe("Local virtual IP, usually %config to ask the peer for one."),
    })
    .describe("One IPsec connection of a host.");

// ---- Remotes (IpsecSite, IpsecHost)

function remoteFields<C extends z.ZodType<{ name: string }>>(connection: C) {
  return {
    name: opt("Ignored: the CNF remote is named after metadata.name.", FIELD_LIMITS.kubeName),
    type: opt("Remote type, e.g. VTI-based.", FIELD_LIMITS.token),
    remote: peerAddress()
      .min(1)
      .describe("Peer gateway: an IPv4/IPv6 address or DNS name, or %any to accept any peer."),
    authentication_method: z
      .enum(["psk", "pubkey"])
      .describe("psk (needs pre_shared_key) or pubkey (needs the three certs)."),
    pre_shared_key: opt(
      "Pre-shared key for psk authentication. Deprecated: readable by every account that reads rules; prefer pre_shared_key_secret_ref.",
    ),
    pre_shared_key_secret_ref: secretKeyRef(
      "The pre-shared key as a key of a Secret in the rule's namespace (instead of pre_shared_key).",
    ),
    local_identifier: opt("Local IKE identity."),
    remote_identifier: opt("Remote IKE identity."),
    crypto_proposal: nameList(
      "IpsecProposal names for IKE, in order of preference.",
      proposalName(),
    ),
    force_crypto_proposal: flag('"1" accepts only the listed proposals.'),
    local_public_cert: opt(
      "Local public certificate (PEM) for pubkey authentication.",
      FIELD_LIMITS.pem,
    ),
    local_private_cert: opt(
      "Local private key (PEM) for pubkey authentication. Deprecated: readable by every account that reads rules; prefer local_private_cert_secret_ref.",
      FIELD_LIMITS.pem,
    ),
    local_private_cert_secret_ref: secretKeyRef(
      "The local private key (PEM) as a key of a Secret in the rule's namespace (instead of local_private_cert).",
    ),
    shared_ca: opt("CA certificate (PEM) for pubkey authentication.", FIELD_LIMITS.pem),
    connections: z
      .array(connection)
      // The CNF answers an empty list with "Not an array", long after admission.
      .min(1, { message: "needs at least one connection" })
      .superRefine((conns, ctx) => {
        const seen = new Set<string>();
        conns.forEach((c, i) => {
          if (seen.has(c.name))
            ctx.addIssue({
              code: "custom",
              path: [i, "name"],
              message: `connection name ${c.name} is used twice`,
            });
          seen.add(c.name);
        });
      })
      .describe("Connections (child SAs) to this peer; at least one."),
  };
}

interface RemoteAuth {
  readonly authentication_method: "psk" | "pubkey";
  readonly pre_shared_key?: string | undefined;
  readonly pre_shared_key_secret_ref?: SecretRef | undefined;
  readonly local_public_cert?: string | undefined;
  readonly local_private_cert?: string | undefined;
  readonly local_private_cert_secret_ref?: SecretRef | undefined;
  readonly shared_ca?: string | undefined;
}

interface SecretRef {
  readonly name: string;
  readonly key: string;
}

/** Key material that may come from a Secret: plain field -> its reference field. */
const SECRET_REF_FIELDS = {
  pre_shared_key_secret_ref: "pre_shared_key",
  local_private_cert_secret_ref: "local_private_cert",
} as const;

/** Whether the spec gives `field` (plain or by reference). */
function given(spec: RemoteAuth, field: keyof RemoteAuth): boolean {
  const ref = Object.entries(SECRET_REF_FIELDS).find(([, plain]) => plain === field)?.[0];
  return Boolean(spec[field]) || (ref !== undefined && spec[ref as keyof RemoteAuth] !== undefined);
}

/** A short key cannot be kept out of logs and status (shared/core/redact.ts); never named here. */
function checkKeyLength(spec: RemoteAuth, ctx: z.RefinementCtx): void {
  const psk = spec.pre_shared_key;
  if (psk === undefined || psk === "" || psk.length >= MIN_KEY_LENGTH) return;
  ctx.addIssue({
    code: "custom",
    path: ["pre_shared_key"],
    message: `must be at least ${MIN_KEY_LENGTH} characters: a shorter key could not be kept out of logs, Events and status`,
  });
}

function checkAuthentication(spec: RemoteAuth, ctx: z.RefinementCtx): void {
  for (const [ref, plain] of Object.entries(SECRET_REF_FIELDS)) {
    if (spec[plain] && spec[ref as keyof RemoteAuth] !== undefined) {
      ctx.addIssue({
        code: "custom",
        path: [ref],
        message: `give ${plain} or ${ref}, not both`,
      });
    }
  }
  checkKeyLength(spec, ctx);
  if (spec.authentication_method === "psk" && !given(spec, "pre_shared_key")) {
    ctx.addIssue({
      code: "custom",
      path: ["pre_shared_key"],
      message: "authentication_method psk needs pre_shared_key or pre_shared_key_secret_ref",
    });
  }
  if (spec.authentication_method === "pubkey") {
    for (const field of ["local_public_cert", "local_private_cert", "shared_ca"] as const) {
      if (!given(spec, field))
        ctx.addIssue({
          code: "custom",
          path: [field],
          message: `authentication_method pubkey needs ${field}${field === "local_private_cert" ? " or local_private_cert_secret_ref" : ""}`,
        });
    }
  }
}

const ipsecSiteSpecSchema = () =>
  z
    .strictObject(remoteFields(ipsecSiteConnectionSchema()))
    .superRefine(checkAuthentication)
    .describe("An IPsec site (hub side): a peer and the connections offered to it.");
export type IpsecSiteSpec = z.infer<ReturnType<typeof ipsecSiteSpecSchema>>;

const ipsecHostSpecSchema = () =>
  z
    .strictObject(remoteFields(ipsecHostConnectionSchema()))
    .superRefine(checkAuthentication)
    .describe("An IPsec host (edge side): a peer gateway and the connections to it.");
export type IpsecHostSpec = z.infer<ReturnType<typeof ipsecHostSpecSchema>>;

const connectionShape: CnfShape = {
  scalars: [
    "name",
    "conn_type",
    "mode",
    "local_subnet",
    "local_nat",
    "local_sourceip",
    "local_updown",
    "local_firewall",
    "remote_subnet",
    "remote_sourceip",
    "remote_updown",
    "remote_firewall",
    "mark",
  ],
  orderedLists: ["crypto_proposal"],
};

const remoteShape: CnfShape = {
  scalars: [
    "type",
    "gateway",
    "authentication_method",
    "pre_shared_key",
    "local_identifier",
    "remote_identifier",
    "force_crypto_proposal",
    "local_public_cert",
    "local_private_cert",
    "shared_ca",
  ],
  orderedLists: ["crypto_proposal"],
  recordLists: { connections: { identity: "name", shape: connectionShape } },
};

type RemoteSpec = IpsecSiteSpec | IpsecHostSpec;

/** Proposals are IpsecProposals, stored under their UCI section names; none is left out. */
const proposalsOf = (names: readonly string[] | undefined): CnfRecord =>
  names === undefined || names.length === 0 ? {} : { crypto_proposal: names.map(uciSectionName) };

function remoteToCnf(name: string, spec: RemoteSpec): CnfObject {
  const connections: CnfRecord[] = spec.connections.map((c) => ({
    ...bodyFromShape(connectionShape, c),
    name: c.name,
    ...proposalsOf(c.crypto_proposal),
  }));
  return {
    ...bodyFromShape(remoteShape, spec),
    name,
    gateway: spec.remote,
    ...proposalsOf(spec.crypto_proposal),
    connections,
  };
}

/** Connection names are UCI section names: one CNF holds each once, whichever remote lists it. */
const connectionNames = (spec: RemoteSpec) =>
  spec.connections.map((c, i) => ({
    what: "connection name",
    name: c.name,
    field: `spec.connections[${i}].name`,
  }));

function proposalReferences(spec: RemoteSpec): RuleReference[] {
  const refs: RuleReference[] = spec.crypto_proposal.map((p, i) => ({
    kind: "IpsecProposal",
    name: p,
    field: `spec.crypto_proposal[${i}]`,
  }));
  spec.connections.forEach((c, ci) => {
    (c.crypto_proposal ?? []).forEach((p, pi) => {
      refs.push({
        kind: "IpsecProposal",
        name: p,
        field: `spec.connections[${ci}].crypto_proposal[${pi}]`,
      });
    });
  });
  return refs;
}

export const ipsecSite: RuleKindEntry = defineRuleKind<IpsecSiteSpec>({
  kind: "IpsecSite",
  plural: "ipsecsites",
  shortNames: ["ipsite"],
  finalizer: "ipsec.site.finalizers.sdewan.akraino.org",
  description:
    "IpsecSite is the hub side of IPsec tunnels, applied as a CNF remote to every pod of the CNF labelled with the same sdewanPurpose.",
  specSchema: ipsecSiteSpecSchema,
  cnf: {
    module: "ipsec",
    collection: "remotes",
    restartService: "ipsec",
    update: "put",
    shape: remoteShape,
  },
  dependsOn: ["IpsecProposal"],
  applyRank: 1,
  nameRule: IPSEC_NAME_RULE,
  references: proposalReferences,
  secrets: (spec) => [spec.pre_shared_key, spec.local_private_cert],
  secretRefFields: SECRET_REF_FIELDS,
  cnfUniqueNames: connectionNames,
  toCnf: remoteToCnf,
  // No change: the site's settings are its tunnels; the soak varies hosts instead.
  example: {
    namePrefix: "site",
    spec: (i, ref) => ({
      remote: "%any",
      authentication_method: "psk",
      pre_shared_key: "example-key",
      crypto_proposal: [ref("IpsecProposal", i)],
      connections: [
        {
          name: `site${i}conn`,
          conn_type: "tunnel",
          mode: "start",
          local_subnet: `172.${16 + (i % 16)}.${i >> 4}.0/24`,
          remote_sourceip: "172.12.0.30-172.12.0.45",
          crypto_proposal: [ref("IpsecProposal", i)],
        },
      ],
    }),
  },
});

export const ipsecHost: RuleKindEntry = defineRuleKind<IpsecHostSpec>({
  kind: "IpsecHost",
  plural: "ipsechosts",
  shortNames: ["iphost"],
  finalizer: "ipsec.host.finalizers.sdewan.akraino.org",
  description:
    "IpsecHost is the edge side of IPsec tunnels, applied as a CNF remote to every pod of the CNF labelled with the same sdewanPurpose.",
  specSchema: ipsecHostSpecSchema,
  cnf: {
    module: "ipsec",
    collection: "remotes",
    restartService: "ipsec",
    update: "put",
    shape: remoteShape,
  },
  dependsOn: ["IpsecProposal"],
  applyRank: 1,
  nameRule: IPSEC_NAME_RULE,
  references: proposalReferences,
  secrets: (spec) => [spec.pre_shared_key, spec.local_private_cert],
  secretRefFields: SECRET_REF_FIELDS,
  cnfUniqueNames: connectionNames,
  toCnf: remoteToCnf,
  example: {
    namePrefix: "host",
    spec: (i, ref) => ({
      remote: `10.10.${exampleOctets(i)}`,
      authentication_method: "psk",
      pre_shared_key: "example-key",
      crypto_proposal: [ref("IpsecProposal", i)],
      connections: [
        {
          name: `host${i}conn`,
          conn_type: "tunnel",
          mode: "start",
          local_sourceip: "%config",
          remote_subnet: "172.12.0.0/24",
          crypto_proposal: [ref("IpsecProposal", i)],
        },
      ],
    }),
    change: (n) => ({ remote: `10.10.${n % 250}.${Math.floor(n / 250) % 250}` }),
  },
});
