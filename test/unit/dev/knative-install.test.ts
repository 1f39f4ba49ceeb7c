import {
  knativeCommands,
  knativeImage,
  manifestFiles,
  substituteKoImages,
  UnknownKoImageError,
} from "../../../dev/node/knative-install.js";

const images = {
  "knative.dev/eventing/cmd/controller": "127.0.0.1:5000/knative-eventing/controller:abc",
  "knative.dev/eventing/cmd/apiserver_receive_adapter":
    "127.0.0.1:5000/knative-eventing/apiserver-receive-adapter:abc",
};

describe("Knative's config/ with our images", () => {
  it("replaces ko:// in image fields and in env values, and nothing else", () => {
    const yaml = [
      "containers:",
      "- name: eventing-controller",
      "  image: ko://knative.dev/eventing/cmd/controller",
      "  env:",
      "  - name: APISERVER_RA_IMAGE",
      "    value: ko://knative.dev/eventing/cmd/apiserver_receive_adapter",
      "  - name: NOTE",
      '    value: "ko is a build tool"',
    ].join("\n");
    expect(substituteKoImages(yaml, images)).toBe(
      [
        "containers:",
        "- name: eventing-controller",
        "  image: 127.0.0.1:5000/knative-eventing/controller:abc",
        "  env:",
        "  - name: APISERVER_RA_IMAGE",
        "    value: 127.0.0.1:5000/knative-eventing/apiserver-receive-adapter:abc",
        "  - name: NOTE",
        '    value: "ko is a build tool"',
      ].join("\n"),
    );
  });

  it("refuses a ko:// reference it has no image for, naming it", () => {
    const yaml = "image: ko://knative.dev/eventing/cmd/jobsink\nimage: ko://knative.dev/x/y\n";
    expect(() => substituteKoImages(yaml, images)).toThrow(UnknownKoImageError);
    expect(() => substituteKoImages(yaml, images)).toThrow(
      "no image built for knative.dev/eventing/cmd/jobsink, knative.dev/x/y",
    );
  });

  it("reads the files ko would, in lexical order", () => {
    expect(
      manifestFiles([
        "roles/b.yaml",
        "200-ingress-roles.yaml~cd5b396a2 (added tls support for ingress)",
        "README.md",
        "placeholder.go",
        "deployments/a.yaml",
        "a.json",
      ]),
    ).toEqual(["a.json", "deployments/a.yaml", "roles/b.yaml"]);
  });

  it("names each command's image in the node's registry by Knative's commit", () => {
    expect(
      knativeImage("127.0.0.1:5000", "apiserver_receive_adapter", "8cf4c4b673034020f5ec"),
    ).toBe("127.0.0.1:5000/knative-eventing/apiserver-receive-adapter:8cf4c4b67303");
    expect(new Set(Object.values(knativeCommands)).size).toBe(Object.keys(knativeCommands).length);
  });
});
