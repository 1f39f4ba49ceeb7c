// The node's configuration files, as pure functions of the layout and the folders they name.
import { stringify } from "yaml";
import type { nodeLayout } from "./layout.js";

type Layout = typeof nodeLayout;

export interface NodeFolders {
  /** Per-run folder: configs, logs, kubeconfigs (removed at stop). */
  readonly work: string;
  readonly registryStorage: string;
  readonly caCertPath: string;
}

export function containerdConfig(layout: Layout, folders: NodeFolders): string {
  const mirror = (host: string): string =>
    `    [plugins."io.containerd.grpc.v1.cri".registry.mirrors."${host}"]\n      endpoint = ["http://${layout.registry}"]`;
  return `version = 2
root = "${layout.stateDir}/containerd"
state = "${layout.runDir}/containerd"
disabled_plugins = ["io.containerd.snapshotter.v1.btrfs", "io.containerd.snapshotter.v1.zfs", "io.containerd.snapshotter.v1.devmapper", "io.containerd.snapshotter.v1.aufs"]

[grpc]
  address = "${layout.runDir}/containerd/containerd.sock"

[plugins."io.containerd.grpc.v1.cri"]
  sandbox_image = "registry.k8s.io/pause:3.10"
  disable_apparmor = true
  enable_selinux = false
  # root here lacks CAP_SYS_RESOURCE, so runc cannot set oom_score_adj below 0: clamp it
  restrict_oom_score_adj = true
  [plugins."io.containerd.grpc.v1.cri".containerd]
    snapshotter = "overlayfs"
    default_runtime_name = "runc"
    [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc]
      runtime_type = "io.containerd.runc.v2"
      [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc.options]
        SystemdCgroup = false
        Root = "${layout.runDir}/runc"
  [plugins."io.containerd.grpc.v1.cri".cni]
    bin_dir = "/usr/lib/cni"
    conf_dir = "${folders.work}/cni"
    max_conf_num = 1
  # Images are pulled as on any cluster, from the node's own registry: the public names
  # (sdewan-functions:latest is docker.io/library/...) resolve to it.
  [plugins."io.containerd.grpc.v1.cri".registry]
${mirror("docker.io")}
${mirror("registry.k8s.io")}
${mirror(layout.registry)}
`;
}

export function cniConfig(layout: Layout, folders: NodeFolders): string {
  return JSON.stringify(
    {
      cniVersion: "1.0.0",
      name: layout.name,
      plugins: [
        {
          type: "bridge",
          bridge: layout.bridge,
          isGateway: true,
          ipMasq: false,
          hairpinMode: true,
          ipam: {
            type: "host-local",
            dataDir: `${folders.work}/ipam`,
            ranges: [[{ subnet: layout.podSubnet, gateway: layout.podGateway }]],
            routes: [{ dst: "0.0.0.0/0" }],
          },
        },
        { type: "portmap", capabilities: { portMappings: true } },
      ],
    },
    null,
    2,
  );
}

export function kubeletConfig(layout: Layout, folders: NodeFolders): string {
  return stringify({
    apiVersion: "kubelet.config.k8s.io/v1beta1",
    kind: "KubeletConfiguration",
    // kubelet >= 1.35 refuses cgroup v1 unless told; this machine kind is cgroup v1
    failCgroupV1: false,
    cgroupDriver: "cgroupfs",
    containerRuntimeEndpoint: `unix://${layout.runDir}/containerd/containerd.sock`,
    address: layout.address,
    port: 10250,
    readOnlyPort: 0,
    authentication: {
      anonymous: { enabled: false },
      webhook: { enabled: true },
      x509: { clientCAFile: folders.caCertPath },
    },
    authorization: { mode: "Webhook" },
    clusterDomain: layout.clusterDomain,
    clusterDNS: [layout.dnsServiceIp],
    // No resolver beyond the cluster's: nothing outside the namespace is reachable anyway.
    resolvConf: `${folders.work}/resolv.conf`,
    failSwapOn: false,
    // The disk is shared and images come from the node's registry: never garbage-collect them.
    imageGCHighThresholdPercent: 100,
    imageGCLowThresholdPercent: 99,
    evictionHard: {
      "memory.available": "100Mi",
      "nodefs.available": "2%",
      "imagefs.available": "2%",
      "nodefs.inodesFree": "2%",
    },
    maxPods: 110,
    serializeImagePulls: false,
    // Pod status reaches the API server promptly (the functions react to it).
    nodeStatusUpdateFrequency: "10s",
  });
}

export function kubeProxyConfig(layout: Layout, kubeconfigPath: string): string {
  return stringify({
    apiVersion: "kubeproxy.config.k8s.io/v1alpha1",
    kind: "KubeProxyConfiguration",
    clientConnection: { kubeconfig: kubeconfigPath },
    hostnameOverride: layout.name,
    mode: "iptables",
    clusterCIDR: layout.clusterCidr,
    bindAddress: "0.0.0.0",
    metricsBindAddress: "127.0.0.1:10249",
    healthzBindAddress: "127.0.0.1:10256",
    // Leave the (partly host-global) conntrack sysctls alone.
    conntrack: { maxPerCore: 0, min: 0, tcpEstablishedTimeout: "0s", tcpCloseWaitTimeout: "0s" },
  });
}

export function registryConfig(layout: Layout, folders: NodeFolders): string {
  return stringify({
    version: 0.1,
    log: { level: "warn", accesslog: { disabled: true } },
    storage: { filesystem: { rootdirectory: folders.registryStorage }, delete: { enabled: true } },
    http: { addr: layout.registry },
  });
}

/** In-node kubeconfig: the components reach the API server at the node's address. */
export function inNodeKubeconfig(
  layout: Layout,
  port: number,
  caPem: string,
  user: string,
  token: string,
): string {
  return stringify({
    apiVersion: "v1",
    kind: "Config",
    clusters: [
      {
        name: layout.name,
        cluster: {
          server: `https://${layout.address}:${port}`,
          "certificate-authority-data": Buffer.from(caPem).toString("base64"),
        },
      },
    ],
    users: [{ name: user, user: { token } }],
    contexts: [{ name: layout.name, context: { cluster: layout.name, user } }],
    "current-context": layout.name,
  });
}

/** CoreDNS as a cluster runs it: a Deployment behind the kube-dns Service, reading Services. */
export function coreDnsManifests(layout: Layout, image: string): string {
  const labels = { "k8s-app": "kube-dns" };
  const objects = [
    {
      apiVersion: "v1",
      kind: "ServiceAccount",
      metadata: { name: "coredns", namespace: "kube-system" },
    },
    {
      apiVersion: "rbac.authorization.k8s.io/v1",
      kind: "ClusterRole",
      metadata: { name: "system:coredns" },
      rules: [
        {
          apiGroups: [""],
          resources: ["services", "pods", "namespaces"],
          verbs: ["list", "watch"],
        },
        {
          apiGroups: ["discovery.k8s.io"],
          resources: ["endpointslices"],
          verbs: ["list", "watch"],
        },
      ],
    },
    {
      apiVersion: "rbac.authorization.k8s.io/v1",
      kind: "ClusterRoleBinding",
      metadata: { name: "system:coredns" },
      roleRef: {
        apiGroup: "rbac.authorization.k8s.io",
        kind: "ClusterRole",
        name: "system:coredns",
      },
      subjects: [{ kind: "ServiceAccount", name: "coredns", namespace: "kube-system" }],
    },
    {
      apiVersion: "v1",
      kind: "ConfigMap",
      metadata: { name: "coredns", namespace: "kube-system" },
      data: {
        // No forward: nothing outside the node's namespace is reachable. Port 1053: a non-root
        // process gets no effective NET_BIND_SERVICE from the runtime; the Service maps 53 to it.
        Corefile: `.:1053 {
    errors
    health :8080
    ready :8181
    kubernetes ${layout.clusterDomain} in-addr.arpa ip6.arpa {
        pods insecure
        fallthrough in-addr.arpa ip6.arpa
    }
    cache 30
    loop
    reload
}
`,
      },
    },
    {
      apiVersion: "apps/v1",
      kind: "Deployment",
      metadata: { name: "coredns", namespace: "kube-system", labels },
      spec: {
        replicas: 1,
        selector: { matchLabels: labels },
        template: {
          metadata: { labels },
          spec: {
            serviceAccountName: "coredns",
            dnsPolicy: "Default",
            containers: [
              {
                name: "coredns",
                image,
                args: ["-conf", "/etc/coredns/Corefile"],
                ports: [
                  { name: "dns", containerPort: 1053, protocol: "UDP" },
                  { name: "dns-tcp", containerPort: 1053, protocol: "TCP" },
                ],
                readinessProbe: { httpGet: { path: "/ready", port: 8181 }, periodSeconds: 2 },
                livenessProbe: { httpGet: { path: "/health", port: 8080 } },
                resources: {
                  requests: { cpu: "10m", memory: "20Mi" },
                  limits: { memory: "128Mi" },
                },
                securityContext: {
                  allowPrivilegeEscalation: false,
                  readOnlyRootFilesystem: true,
                  runAsNonRoot: true,
                  capabilities: { drop: ["ALL"] },
                },
                volumeMounts: [{ name: "config", mountPath: "/etc/coredns", readOnly: true }],
              },
            ],
            volumes: [{ name: "config", configMap: { name: "coredns" } }],
          },
        },
      },
    },
    {
      apiVersion: "v1",
      kind: "Service",
      metadata: { name: "kube-dns", namespace: "kube-system", labels },
      spec: {
        clusterIP: layout.dnsServiceIp,
        selector: labels,
        ports: [
          { name: "dns", port: 53, targetPort: 1053, protocol: "UDP" },
          { name: "dns-tcp", port: 53, targetPort: 1053, protocol: "TCP" },
        ],
      },
    },
  ];
  return objects.map((o) => stringify(o)).join("---\n");
}
