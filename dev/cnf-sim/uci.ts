/**
 * A minimal in-memory model of the UCI configuration files the upstream CNF REST handlers write
 * (mwan3, firewall, ipsec, network). Only what the REST API's behaviour depends on is modelled:
 * ordered sections with an id and a type, named vs anonymous sections, and one id namespace per
 * config file (which is why a mwan3 rule may not share a name with a policy or an interface).
 */

/** Section data is kept in the REST API's shape (what a GET returns), not as raw UCI options. */
export type SectionData = Record<string, unknown>;

export interface UciSection {
  readonly id: string;
  readonly type: string;
  /** Anonymous sections (firewall objects) get a generated id and carry their name as an option. */
  readonly anonymous: boolean;
  data: SectionData;
}

export type ConfigName = "mwan3" | "firewall" | "ipsec" | "network";

export class UciConfig {
  private sections: UciSection[] = [];
  private anonymousSeq = 0;

  /** Any section whose id is `id`, whatever its type (as `uci:get_all(config, id)`). */
  byId(id: string): UciSection | undefined {
    return this.sections.find((section) => section.id === id);
  }

  ofType(type: string): UciSection[] {
    return this.sections.filter((section) => section.type === type);
  }

  /** The first section of `type` whose id or `name` option equals `name` (named or anonymous). */
  find(type: string, name: string): UciSection | undefined {
    const named = this.byId(name);
    if (named !== undefined) return named.type === type ? named : undefined;
    return this.ofType(type).find((section) => section.data["name"] === name);
  }

  add(type: string, id: string | null, data: SectionData): UciSection {
    const anonymous = id === null;
    const section: UciSection = {
      id: id ?? this.nextAnonymousId(),
      type,
      anonymous,
      data,
    };
    this.sections.push(section);
    return section;
  }

  /** Deletes every section of `type` whose id or `name` option is `name`; returns how many. */
  removeAll(type: string, name: string): number {
    const before = this.sections.length;
    this.sections = this.sections.filter(
      (section) =>
        !(section.type === type && (section.id === name || section.data["name"] === name)),
    );
    return before - this.sections.length;
  }

  removeById(id: string): void {
    this.sections = this.sections.filter((section) => section.id !== id);
  }

  snapshot(): UciSection[] {
    return this.sections.map((section) => ({ ...section, data: structuredClone(section.data) }));
  }

  restore(sections: UciSection[]): void {
    this.sections = sections;
  }

  private nextAnonymousId(): string {
    this.anonymousSeq += 1;
    return `cfg${(0x0a0000 + this.anonymousSeq).toString(16)}`;
  }
}

export type UciWorld = Readonly<Record<ConfigName, UciConfig>>;

/**
 * The configuration a freshly started CNF has: one `network` interface and one `mwan3` interface
 * section per pod interface (the CNF entrypoint writes these), nothing else.
 */
export function bootWorld(interfaces: readonly string[]): UciWorld {
  const world: UciWorld = {
    mwan3: new UciConfig(),
    firewall: new UciConfig(),
    ipsec: new UciConfig(),
    network: new UciConfig(),
  };
  for (const name of interfaces) {
    world.network.add("interface", name, {});
    world.mwan3.add("interface", name, { enabled: "1" });
  }
  return world;
}
