import { startCnfSim, type CnfSim } from "../../../dev/cnf-sim/index.js";
import { restApi, samples } from "./support.js";

/**
 * Field validation per collection, as upstream's validators answer it (reference 2.4):
 * `Field[<name>] checked failed: <message> [<detail>]` with status 400.
 */
describe("CNF simulator: field validation per collection", () => {
  let sim: CnfSim;
  let api: Awaited<ReturnType<typeof restApi>>;
  beforeAll(async () => {
    sim = await startCnfSim({ host: "127.0.0.24" });
    api = await restApi(sim);
    // Dependencies the bodies below refer to.
    await api.post("mwan3/policies", samples.policy);
    await api.post("firewall/zones", samples.zone);
    await api.post("firewall/zones", samples.zone2);
    await api.post("ipsec/proposals", samples.proposal);
  });
  afterAll(() => sim.close());

  const member = samples.policy.members[0];
  const conn = samples.remote.connections[0];

  it.each<[string, string, Record<string, unknown>, string]>([
    // mwan3 policies: members required; metric/weight are strings holding integers > 0
    ["mwan3/policies", "members missing", { name: "p" }, "Field[members] checked failed: required"],
    ["mwan3/policies", "members empty", { name: "p", members: [] }, "Field[members] checked failed: Incorrect policy member [Not an array]"],
    ["mwan3/policies", "metric as a JSON number", { name: "p", members: [{ ...member, metric: 2 }] }, "Field[members] checked failed: Incorrect policy member [Field[metric] checked failed: metric should be greater than 0]"],
    ["mwan3/policies", "weight zero", { name: "p", members: [{ ...member, weight: "0" }] }, "Field[members] checked failed: Incorrect policy member [Field[weight] checked failed: weight should be greater than 0]"],
    ["mwan3/policies", "member interface missing", { name: "p", members: [{ metric: "1", weight: "1" }] }, "Field[members] checked failed: Incorrect policy member [Field[interface] checked failed: required]"],
    ["mwan3/policies", "same interface twice", { name: "p", members: [member, member] }, "Same interface is used in different members"],
    // mwan3 rules
    ["mwan3/rules", "policy missing", { name: "r" }, "Field[policy] checked failed: required"],
    ["mwan3/rules", "bad src_ip", { ...samples.rule, src_ip: "10.0.0.256" }, "Field[src_ip] checked failed: invalid ip address"],
    ["mwan3/rules", "prefix above 32", { ...samples.rule, dest_ip: "10.0.0.0/33" }, "Field[dest_ip] checked failed: invalid ip address"],
    ["mwan3/rules", "port range", { ...samples.rule, dest_port: "80:90" }, "Field[dest_port] checked failed: invalid dest_port"],
    ["mwan3/rules", "proto tcpudp (firewall only)", { ...samples.rule, proto: "tcpudp" }, "Field[proto] checked failed: wrong proto"],
    ["mwan3/rules", "family any (firewall only)", { ...samples.rule, family: "any" }, "Field[family] checked failed: wrong family"],
    ["mwan3/rules", "sticky as a JSON number", { ...samples.rule, sticky: 1 }, "Field[sticky] checked failed: wrong sticky"],
    ["mwan3/rules", "timeout negative", { ...samples.rule, timeout: "-5" }, "Field[timeout] checked failed: invalid timeout"],
    // firewall zones
    ["firewall/zones", "12-character name", { ...samples.zone, name: "abcdefghijkl" }, "Field[name] checked failed: invalid zone name [The length of Name shall not exceed 11 characters]"],
    ["firewall/zones", "network not a list", { ...samples.zone, network: "net0" }, "Field[network] checked failed: invalid network [Not an array]"],
    ["firewall/zones", "masq yes", { ...samples.zone, masq: "yes" }, "Field[masq] checked failed: invalid masq"],
    ["firewall/zones", "masq_src bad", { ...samples.zone, masq_src: ["!10.0.0.1", "nope"] }, "Field[masq_src] checked failed: invalid masq_src"],
    ["firewall/zones", "input lowercase", { ...samples.zone, input: "accept" }, "Field[input] checked failed: invalid input"],
    ["firewall/zones", "family all", { ...samples.zone, family: "all" }, "Field[family] checked failed: invalid family"],
    ["firewall/zones", "subnet bad", { ...samples.zone, subnet: ["10.0.0.0/8", "x"] }, "Field[subnet] checked failed: invalid subnet"],
    // firewall redirects (SNAT / DNAT)
    ["firewall/redirects", "SNAT without src_dip", { ...samples.snat, src_dip: undefined }, "src_dip is required for SNAT"],
    ["firewall/redirects", "SNAT without dest", { ...samples.snat, dest: undefined }, "dest is required for SNAT"],
    ["firewall/redirects", "DNAT without src", { ...samples.dnat, src: undefined }, "src is required for DNAT"],
    ["firewall/redirects", "target MASQUERADE", { ...samples.snat, target: "MASQUERADE" }, "Field[target] checked failed: invalid target"],
    ["firewall/redirects", "bad src_mac", { ...samples.dnat, src_mac: "00:11:22:33:44" }, "Field[src_mac] checked failed: invalid src_mac"],
    ["firewall/redirects", "bad src_dport (message as upstream)", { ...samples.dnat, src_dport: "x" }, "Field[src_dport] checked failed: invalid src_port"],
    ["firewall/redirects", "proto gre", { ...samples.dnat, proto: "gre" }, "Field[proto] checked failed: invalid proto"],
    // firewall rules
    ["firewall/rules", "MARK without set_mark", { name: "m", target: "MARK" }, "set_mark or set_xmark is required for MARK"],
    ["firewall/rules", "unknown icmp_type", { name: "i", icmp_type: ["echo-request", "bogus"] }, "Field[icmp_type] checked failed: invalid icmp_type"],
    ["firewall/rules", "target DNAT", { ...samples.fwRule, target: "DNAT" }, "Field[target] checked failed: invalid target"],
    // firewall forwardings
    ["firewall/forwardings", "src missing", { name: "f", dest: "wan0" }, "Field[src] checked failed: required"],
    ["firewall/forwardings", "dest missing", { name: "f", src: "lan0" }, "Field[dest] checked failed: required"],
    // ipsec proposals
    ["ipsec/proposals", "unknown cipher", { ...samples.proposal, encryption_algorithm: "rot13" }, "Field[encryption_algorithm] checked failed: invalid encryption_algorithm"],
    ["ipsec/proposals", "unknown hash", { ...samples.proposal, hash_algorithm: "crc32" }, "Field[hash_algorithm] checked failed: invalid hash_algorithm"],
    ["ipsec/proposals", "unknown dh group", { ...samples.proposal, dh_group: "modp1" }, "Field[dh_group] checked failed: invalid dh_group"],
    // ipsec remotes
    ["ipsec/remotes", "gateway missing", { ...samples.remote, gateway: undefined }, "Field[gateway] checked failed: required"],
    ["ipsec/remotes", "authentication_method missing", { ...samples.remote, authentication_method: undefined }, "Field[authentication_method] checked failed: required"],
    ["ipsec/remotes", "authentication_method unknown (upstream has no message)", { ...samples.remote, authentication_method: "token" }, "Field[authentication_method] checked failed: "],
    ["ipsec/remotes", "psk without pre_shared_key", { ...samples.remote, pre_shared_key: undefined }, "Secret does not exists for the authentication method: psk"],
    ["ipsec/remotes", "pubkey without certs", { ...samples.remote, authentication_method: "pubkey" }, "Secret does not exists for the authentication method: pubkey"],
    ["ipsec/remotes", "force_crypto_proposal true", { ...samples.remote, force_crypto_proposal: "true" }, "Field[force_crypto_proposal] checked failed: invalid input for ForceCryptoProposal"],
    ["ipsec/remotes", "connection mode missing", { ...samples.remote, connections: [{ ...conn, mode: undefined }] }, "Field[connections] checked failed: invalid connection [Field[mode] checked failed: required]"],
    ["ipsec/remotes", "connection type bad", { ...samples.remote, connections: [{ ...conn, conn_type: "gre" }] }, "Field[connections] checked failed: invalid connection [Field[conn_type] checked failed: invalid type]"],
    ["ipsec/remotes", "connection mode bad", { ...samples.remote, connections: [{ ...conn, mode: "auto" }] }, "Field[connections] checked failed: invalid connection [Field[mode] checked failed: invalid connection mode]"],
  ])("%s: %s -> 400", async (collection, _case, body, message) => {
    const reply = await api.post(collection, body);
    expect(reply.status).toBe(400);
    expect(reply.text).toBe(`{"message":"${message}"}`);
  }); // prettier-ignore

  it.each<[string, Record<string, unknown>]>([
    ["mwan3/rules", { name: "ok1", policy: "balance1", src_ip: "10.0.0.1", dest_ip: "192.168.0.0/16", proto: "all", family: "all", sticky: "1", timeout: "60" }],
    ["firewall/zones", { name: "abcdefghijk", network: ["net0", "net1"], masq_src: ["!10.0.0.0/8"], subnet: ["10.0.0.0/8"], family: "any" }],
    ["firewall/rules", { name: "mark1", target: "MARK", set_xmark: "0x1/0xff", icmp_type: ["echo-request"], proto: "icmp" }],
    ["ipsec/remotes", { name: "pk1", gateway: "%any", authentication_method: "pubkey", local_public_cert: "PUB", local_private_cert: "PRIV", shared_ca: "CA" }],
  ])("%s accepts a valid edge case %j", async (collection, body) => {
    expect((await api.post(collection, body)).status).toBe(201);
  }); // prettier-ignore
});
