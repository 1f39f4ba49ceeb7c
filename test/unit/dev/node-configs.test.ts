import { parse, parseAllDocuments } from "yaml";
import {
  cniConfig,
  containerdConfig,
  coreDnsManifests,
  kubeletConfig,
} from "../../../dev/node/configs.js";
import { nodeLayout, registryPath } from "../../../dev/node/layout.js";

const folders = { work: "/w", registryStorage: "/r", caCertPath: "/w/ca.crt" };
const forbidden = /\b(10\.\d+|172\.(1[6-9]|2\d|3[01])|192\.168)\.\d+\.\d+/;

describe("the real node's configuration", () => {
  it("pulls images by their public names from the node's registry", () => {
    expect(registryPath("sdewan-functions")).toBe("library/sdewan-functions");
    expect(registryPath("docker.io/library/sdewan-functions")).toBe("library/sdewan-functions");
    expect(registryPath("docker.io/sdewan/reconcile-rule")).toBe("sdewan/reconcile-rule");
    expect(registryPath("sdewan/reconcile-rule")).toBe("sdewan/reconcile-rule");
    expect(registryPath("registry.k8s.io/pause")).toBe("pause");
    expect(registryPath("127.0.0.1:5000/cnf-sim")).toBe("cnf-sim");
    const containerd = containerdConfig(nodeLayout, folders);
    for (const host of ["docker.io", "registry.k8s.io", nodeLayout.registry]) {
      expect(containerd).toContain(
        `registry.mirrors."${host}"]\n      endpoint = ["http://${nodeLayout.registry}"]`,
      );
    }
  });

  it("keeps every address inside the node's ranges (never 10.x, 172.16-31.x, 192.168.x)", () => {
    const all = [
      containerdConfig(nodeLayout, folders),
      cniConfig(nodeLayout, folders),
      kubeletConfig(nodeLayout, folders),
      coreDnsManifests(nodeLayout, "registry.k8s.io/coredns/coredns:v1"),
      JSON.stringify(nodeLayout),
    ].join("\n");
    expect(all).not.toMatch(forbidden);
    const cni = JSON.parse(cniConfig(nodeLayout, folders)) as {
      plugins: { ipam?: { ranges: { subnet: string }[][] } }[];
    };
    expect(cni.plugins[0]?.ipam?.ranges[0]?.[0]?.subnet).toBe("100.64.0.0/24");
  });

  it("serves cluster DNS on the kube-dns Service the kubelet hands to pods", () => {
    const kubelet = parse(kubeletConfig(nodeLayout, folders)) as { clusterDNS: string[] };
    const docs = parseAllDocuments(coreDnsManifests(nodeLayout, "img")).map(
      (d) => d.toJSON() as { kind: string; spec?: { clusterIP?: string; ports?: unknown[] } },
    );
    const service = docs.find((d) => d.kind === "Service");
    expect(service?.spec?.clusterIP).toBe(kubelet.clusterDNS[0]);
    // a non-root CoreDNS cannot bind 53: the Service maps 53 to its 1053
    expect(service?.spec?.ports).toContainEqual({
      name: "dns",
      port: 53,
      targetPort: 1053,
      protocol: "UDP",
    });
  });
});
