/**
 * Rules whose delivery ended with their restart deferred (ADR 0020), by CNF, so the delivery that
 * pays the restart can sync them at once and their redeliveries find their own write's echo
 * (ADR 0021). Per process and safe to lose: every deferred rule's redelivery is owed by the
 * delivery layer, which a lost entry only leaves to do the work itself.
 */

export interface DeferredRule {
  readonly kind: string;
  readonly name: string;
}

/** CNFs (and rules per CNF) remembered at most; past it the oldest go (a lost entry costs reads). */
const MAX_CNFS = 1_000;
const MAX_RULES_PER_CNF = 10_000;

const ruleId = (namespace: string, rule: DeferredRule) => `${namespace}/${rule.kind}/${rule.name}`;

export class DeferredRules {
  private readonly byCnf = new Map<string, Map<string, DeferredRule>>();
  /** A batch sync in flight, by rule: a redelivery waits for it and then reads its echo. */
  private readonly batches = new Map<string, Promise<unknown>>();

  /**
   * `rule`, on the CNF keyed `cnf` ("namespace/name#uid"), owes a restart that was deferred. True when it is the first
   * remembered since the CNF's last paid restart: its redelivery is the one meant to pay it.
   */
  defer(cnf: string, rule: DeferredRule): boolean {
    let rules = this.byCnf.get(cnf);
    if (rules === undefined) {
      if (this.byCnf.size >= MAX_CNFS) {
        const oldest = this.byCnf.keys().next().value;
        if (oldest !== undefined) this.byCnf.delete(oldest);
      }
      rules = new Map();
      this.byCnf.set(cnf, rules);
    }
    if (rules.size >= MAX_RULES_PER_CNF) rules.clear();
    const id = `${rule.kind}/${rule.name}`;
    const first = rules.size === 0 || (rules.size === 1 && rules.has(id));
    rules.set(id, { kind: rule.kind, name: rule.name });
    return first;
  }

  /** Every rule of the CNF remembered as deferred, forgotten here (the caller syncs them). */
  take(cnf: string): DeferredRule[] {
    const rules = this.byCnf.get(cnf);
    this.byCnf.delete(cnf);
    return rules === undefined ? [] : [...rules.values()];
  }

  /** Runs `batch`, which syncs `rules` of `namespace`, letting their redeliveries wait for it. */
  async track<T>(namespace: string, rules: readonly DeferredRule[], batch: Promise<T>): Promise<T> {
    const ids = rules.map((r) => ruleId(namespace, r));
    for (const id of ids) this.batches.set(id, batch);
    try {
      return await batch;
    } finally {
      for (const id of ids) if (this.batches.get(id) === batch) this.batches.delete(id);
    }
  }

  /** Settles once a batch sync of the rule in flight, if any, has ended (however it ended). */
  async settled(namespace: string, rule: DeferredRule): Promise<void> {
    const batch = this.batches.get(ruleId(namespace, rule));
    if (batch !== undefined) await batch.catch(() => undefined);
  }

  /** Forgets everything, as a new process would. */
  clear(): void {
    this.byCnf.clear();
    this.batches.clear();
  }
}

export const processDeferredRules = new DeferredRules();
