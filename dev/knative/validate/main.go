// validate-manifests: Knative Eventing's own checks of Knative objects, as its admission webhooks
// run them on create: strict decoding into the Go types (an unknown or misspelt field is an
// error), SetDefaults, then Validate. A schema check does not see semantic errors (a Trigger
// filter with two dialects, a bad delivery duration, a PingSource schedule that does not parse).
//
// dev/knative/build.sh copies this file into the unpacked, vendored knative.dev/eventing tree
// (kn-min/cmd/sdewan-validate-manifests/) and builds it there; it is never built in this repository.
//
// Usage: validate-manifests [--feature <flag>=<enabled|disabled|allowed>]... <file.yaml>...
// Each Knative Eventing object (Broker, Trigger, ApiServerSource, PingSource) prints
// "ok <file> <kind>/<name>" or "invalid <file> <kind>/<name>: <why>"; other kinds print
// "skipped". The feature flags are config-features' (Knative's defaults for the rest). Exit 0 when
// every object is valid, 1 when one is not, 2 on a usage or read error.
package main

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"k8s.io/apimachinery/pkg/runtime/schema"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"knative.dev/pkg/apis"
	sigsyaml "sigs.k8s.io/yaml"

	eventingv1 "knative.dev/eventing/pkg/apis/eventing/v1"
	"knative.dev/eventing/pkg/apis/feature"
	sourcesv1 "knative.dev/eventing/pkg/apis/sources/v1"
)

type object interface {
	apis.Defaultable
	apis.Validatable
}

func newObject(gvk schema.GroupVersionKind) object {
	switch gvk {
	case eventingv1.SchemeGroupVersion.WithKind("Broker"):
		return &eventingv1.Broker{}
	case eventingv1.SchemeGroupVersion.WithKind("Trigger"):
		return &eventingv1.Trigger{}
	case sourcesv1.SchemeGroupVersion.WithKind("ApiServerSource"):
		return &sourcesv1.ApiServerSource{}
	case sourcesv1.SchemeGroupVersion.WithKind("PingSource"):
		return &sourcesv1.PingSource{}
	}
	return nil
}

type header struct {
	APIVersion string `json:"apiVersion"`
	Kind       string `json:"kind"`
	Metadata   struct {
		Name string `json:"name"`
	} `json:"metadata"`
}

// check validates every document of one file; it reports whether all were valid.
func check(ctx context.Context, file string) (bool, error) {
	data, err := os.ReadFile(file)
	if err != nil {
		return false, err
	}
	reader := utilyaml.NewYAMLReader(bufio.NewReader(bytes.NewReader(data)))
	valid := true
	for {
		doc, err := reader.Read()
		if errors.Is(err, io.EOF) {
			return valid, nil
		}
		if err != nil {
			return false, fmt.Errorf("%s: %w", file, err)
		}
		if len(bytes.TrimSpace(doc)) == 0 {
			continue
		}
		var h header
		if err := sigsyaml.Unmarshal(doc, &h); err != nil {
			return false, fmt.Errorf("%s: %w", file, err)
		}
		if h.Kind == "" {
			continue // only comments
		}
		name := h.Kind + "/" + h.Metadata.Name
		obj := newObject(schema.FromAPIVersionAndKind(h.APIVersion, h.Kind))
		if obj == nil {
			fmt.Printf("skipped %s %s (%s is not a Knative Eventing type this checks)\n", file, name, h.APIVersion)
			continue
		}
		if err := sigsyaml.UnmarshalStrict(doc, obj); err != nil {
			fmt.Printf("invalid %s %s: strict decoding: %v\n", file, name, err)
			valid = false
			continue
		}
		obj.SetDefaults(ctx)
		if fe := obj.Validate(ctx); fe != nil {
			fmt.Printf("invalid %s %s: %s\n", file, name, strings.ReplaceAll(fe.Error(), "\n", "; "))
			valid = false
			continue
		}
		fmt.Printf("ok %s %s\n", file, name)
	}
}

func main() {
	flags := map[string]string{}
	var files []string
	args := os.Args[1:]
	for i := 0; i < len(args); i++ {
		if args[i] == "--feature" && i+1 < len(args) {
			key, value, ok := strings.Cut(args[i+1], "=")
			if !ok {
				fmt.Fprintf(os.Stderr, "--feature wants <flag>=<value>, got %q\n", args[i+1])
				os.Exit(2)
			}
			flags[key] = value
			i++
			continue
		}
		files = append(files, args[i])
	}
	if len(files) == 0 {
		fmt.Fprintln(os.Stderr, "usage: validate-manifests [--feature <flag>=<value>]... <file.yaml>...")
		os.Exit(2)
	}
	features, err := feature.NewFlagsConfigFromMap(flags)
	if err != nil {
		fmt.Fprintf(os.Stderr, "feature flags: %v\n", err)
		os.Exit(2)
	}
	// As the webhook sees a create: the feature flags in the context, apis.WithinCreate.
	ctx := apis.WithinCreate(feature.ToContext(context.Background(), features))
	allValid := true
	for _, file := range files {
		valid, err := check(ctx, file)
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(2)
		}
		allValid = allValid && valid
	}
	if !allValid {
		os.Exit(1)
	}
}
