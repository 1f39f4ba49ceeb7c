/**
 * Section stores behind the REST collections: the generic UCI store (named or anonymous sections)
 * and the two kinds upstream stores in several sections (mwan3 policies with member sections,
 * ipsec remotes with tunnel/transport connection sections).
 */
import type { SectionStore, StoreResult } from "./collection.js";
import type { UciConfig, UciSection } from "./uci.js";

const ok: StoreResult = { ok: true };
/** Generic creates lose the conflict message upstream: the body is `{"message":""}`. */
const genericConflict: StoreResult = { ok: false, status: 409, message: "" };

/**
 * libuci refuses a section name outside [A-Za-z0-9_] (uci_validate_name), so such an object is
 * never stored: a name as Kubernetes allows it ("http-rule") must be mapped before it is sent.
 */
function badSectionNames(...names: string[]): StoreResult | undefined {
  const bad = names.find((name) => !/^[A-Za-z0-9_]+$/.test(name));
  return bad === undefined
    ? undefined
    : {
        ok: false,
        status: 400,
        message: `invalid UCI section name ${bad}: letters, digits and _ only`,
      };
}

/** One section per object. Named sections are keyed by the object name in the config's id space. */
export function uciStore(config: UciConfig, type: string, anonymous: boolean): SectionStore {
  const view = (section: UciSection): Record<string, unknown> =>
    anonymous ? { ...section.data } : { name: section.id, ...withoutName(section.data) };
  return {
    get(name) {
      const section = config.find(type, name);
      return section === undefined ? undefined : view(section);
    },
    list: () => config.ofType(type).map(view),
    create(value) {
      const name = String(value["name"]);
      // Upstream checks `uci:get_all(config, name)`: anonymous sections never match, so a
      // duplicate firewall object is accepted and stored twice.
      if (config.byId(name) !== undefined) return genericConflict;
      if (!anonymous) {
        const bad = badSectionNames(name);
        if (bad !== undefined) return bad;
      }
      config.add(type, anonymous ? null : name, anonymous ? value : withoutName(value));
      return ok;
    },
    remove(name) {
      config.removeAll(type, name);
    },
  };
}

/** mwan3 policy: a `policy` section listing `use_member`, one `member` section per interface. */
export function mwan3PolicyStore(mwan3: UciConfig): SectionStore {
  const get = (name: string): Record<string, unknown> | undefined => {
    const section = mwan3.byId(name);
    if (section === undefined || section.type !== "policy") return undefined;
    const members = stringList(section.data["use_member"]).flatMap((memberId) => {
      const member = mwan3.byId(memberId);
      return member === undefined ? [] : [{ name: memberId, ...member.data }];
    });
    return { name, members };
  };
  return {
    get,
    list: () => defined(mwan3.ofType("policy").map((section) => get(section.id))),
    create(value) {
      const name = String(value["name"]);
      // The policy's own create keeps its message, unlike the generic one.
      if (mwan3.byId(name) !== undefined) return { ok: false, status: 409, message: "Conflict" };
      const bad = badSectionNames(name);
      if (bad !== undefined) return bad;
      const members = recordList(value["members"]);
      const memberIds = members.map((member) => `${name}_${String(member["interface"])}`);
      if (new Set(memberIds).size !== memberIds.length) {
        return { ok: false, status: 400, message: "Same interface is used in different members" };
      }
      members.forEach((member, index) => {
        const memberId = memberIds[index] ?? "";
        mwan3.removeById(memberId);
        mwan3.add("member", memberId, {
          interface: member["interface"],
          metric: member["metric"],
          weight: member["weight"],
        });
      });
      mwan3.add("policy", name, { use_member: memberIds });
      return ok;
    },
    remove(name) {
      const section = mwan3.byId(name);
      if (section === undefined || section.type !== "policy") return;
      for (const memberId of stringList(section.data["use_member"])) mwan3.removeById(memberId);
      mwan3.removeById(name);
    },
  };
}

/** ipsec remote: a `remote` section listing its connections in `tunnel` / `transport` options. */
export function ipsecRemoteStore(ipsec: UciConfig): SectionStore {
  const get = (name: string): Record<string, unknown> | undefined => {
    const section = ipsec.find("remote", name);
    if (section === undefined) return undefined;
    const { tunnel, transport, ...options } = section.data;
    const connectionIds = [...stringList(tunnel), ...stringList(transport)];
    const connections = connectionIds.flatMap((id) => {
      const connection = ipsec.byId(id);
      return connection === undefined
        ? []
        : [{ name: id, conn_type: connection.type, ...connection.data }];
    });
    return connections.length > 0
      ? { name: section.id, ...options, connections }
      : { name: section.id, ...options };
  };
  return {
    get,
    list: () => defined(ipsec.ofType("remote").map((section) => get(section.id))),
    create(value) {
      const name = String(value["name"]);
      const connections = recordList(value["connections"]);
      const taken = new Set([name]);
      if (ipsec.byId(name) !== undefined) return genericConflict;
      for (const connection of connections) {
        const id = String(connection["name"]);
        if (taken.has(id) || ipsec.byId(id) !== undefined) return genericConflict;
        taken.add(id);
      }
      const bad = badSectionNames(...taken);
      if (bad !== undefined) return bad;
      const { connections: _connections, ...options } = withoutName(value);
      const idsOf = (type: string): string[] =>
        connections.filter((c) => c["conn_type"] === type).map((c) => String(c["name"]));
      const listed = { tunnel: idsOf("tunnel"), transport: idsOf("transport") };
      ipsec.add("remote", name, {
        ...options,
        ...(listed.tunnel.length > 0 ? { tunnel: listed.tunnel } : {}),
        ...(listed.transport.length > 0 ? { transport: listed.transport } : {}),
      });
      for (const connection of connections) {
        const { name: id, conn_type: type, ...rest } = connection;
        ipsec.add(String(type), String(id), rest);
      }
      return ok;
    },
    remove(name) {
      const section = ipsec.find("remote", name);
      if (section === undefined) return;
      const ids = [...stringList(section.data["tunnel"]), ...stringList(section.data["transport"])];
      for (const id of ids) ipsec.removeById(id);
      ipsec.removeById(section.id);
    },
  };
}

function defined<T>(values: readonly (T | undefined)[]): T[] {
  return values.filter((value): value is T => value !== undefined);
}

function withoutName(data: Record<string, unknown>): Record<string, unknown> {
  const { name: _name, ...rest } = data;
  return rest;
}

function stringList(value: unknown): string[] {
  return Array.isArray(value) ? value.map((item) => String(item)) : [];
}

function recordList(value: unknown): Record<string, unknown>[] {
  return Array.isArray(value) ? (value as Record<string, unknown>[]) : [];
}
