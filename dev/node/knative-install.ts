// How Knative Eventing's own install (its config/ folder, as `ko resolve -R -f` reads it) becomes
// what we apply on the node: the files in Knative's order, and every `ko://<import path>` replaced
// by the image we built from that command. Pure: dev/node/knative.ts does the building and applying.

/**
 * Knative's documented install order: CRDs, core, the in-memory channel, the MT channel broker,
 * each read as its release script reads it (`ko resolve -R -f config/core/`, ...). Several files
 * are symlinks (config/core/configmaps into third_party/): ko follows them, so must we.
 */
export const knativeInstallSteps = [
  { name: "crds", dir: "config/core/resources", recursive: false },
  { name: "core", dir: "config/core", recursive: true },
  { name: "in-memory-channel", dir: "config/channels/in-memory-channel", recursive: true },
  { name: "mt-channel-broker", dir: "config/brokers/mt-channel-broker", recursive: true },
] as const;

/** The commands config/ names as ko:// images (and the dead-letter sink), by import path, and our binary's name for each. */
export const knativeCommands: Readonly<Record<string, string>> = {
  "knative.dev/eventing/cmd/controller": "controller",
  "knative.dev/eventing/cmd/webhook": "webhook",
  "knative.dev/eventing/cmd/broker/ingress": "broker-ingress",
  "knative.dev/eventing/cmd/broker/filter": "broker-filter",
  "knative.dev/eventing/cmd/mtchannel_broker": "mtchannel_broker",
  "knative.dev/eventing/cmd/in_memory/channel_controller": "imc-controller",
  "knative.dev/eventing/cmd/in_memory/channel_dispatcher": "imc-dispatcher",
  "knative.dev/eventing/cmd/apiserver_receive_adapter": "apiserver_receive_adapter",
  "knative.dev/eventing/cmd/mtping": "mtping",
  "knative.dev/eventing/cmd/jobsink": "jobsink",
  "knative.dev/eventing/cmd/requestreply": "requestreply",
  "knative.dev/eventing/cmd/auth_proxy": "auth_proxy",
  // Not in config/: the dead-letter sink of manifests/knative-deployments.
  "knative.dev/eventing/cmd/event_display": "event_display",
};

/**
 * The files of one step as ko reads them: *.yaml / *.yml / *.json under `dir`, recursively, in
 * lexical path order (editor backups such as `x.yaml~abc` are not YAML to ko either).
 */
export function manifestFiles(paths: readonly string[]): string[] {
  return paths.filter((p) => /\.(ya?ml|json)$/.test(p)).sort();
}

/** The image reference our registry serves for a command's binary, tagged by Knative's commit. */
export function knativeImage(registry: string, binary: string, commit: string): string {
  return `${registry}/knative-eventing/${binary.replace(/_/g, "-")}:${commit.slice(0, 12)}`;
}

export class UnknownKoImageError extends Error {
  override readonly name = "UnknownKoImageError";
}

/**
 * Replaces every `ko://<import path>` (an image: field or an env value such as the controller's
 * APISERVER_RA_IMAGE) with `images[import path]`. A ko:// reference without an image is an
 * error naming it: applying it would leave a Pod in ImagePullBackOff.
 */
export function substituteKoImages(yaml: string, images: Readonly<Record<string, string>>): string {
  const unknown = new Set<string>();
  const out = yaml.replace(/ko:\/\/([A-Za-z0-9._~\-/]+)/g, (_, importPath: string) => {
    const image = images[importPath];
    if (image === undefined) {
      unknown.add(importPath);
      return `ko://${importPath}`;
    }
    return image;
  });
  if (unknown.size > 0) {
    throw new UnknownKoImageError(`no image built for ${[...unknown].sort().join(", ")}`);
  }
  return out;
}
