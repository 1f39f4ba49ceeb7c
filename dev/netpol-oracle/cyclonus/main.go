// Command netpol-cyclonus asks cyclonus (github.com/mattfenwick/cyclonus/pkg/matcher, built for
// NetworkPolicy conformance testing) for the Kubernetes verdict of each piece of traffic, so the
// TypeScript compiler in shared/netpol is judged by an oracle nobody here wrote.
//
// stdin: a JSON array of worlds {"policies": [NetworkPolicy...], "traffic": [Traffic...]}.
// stdout: a JSON array with, per world, one boolean per traffic: is that direction allowed.
// Policies must carry policyTypes (cyclonus's builder does not default them).
//
// `netpol-cyclonus generate <pod IP>` instead prints cyclonus's own generated conformance cases
// (pkg/generator, every tag) as the world after each step (generate.go).
package main

import (
	"encoding/json"
	"fmt"
	"os"

	"github.com/mattfenwick/cyclonus/pkg/matcher"
	v1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
)

type peer struct {
	IP       string `json:"ip"`
	Internal *struct {
		Namespace       string            `json:"namespace"`
		PodLabels       map[string]string `json:"podLabels"`
		NamespaceLabels map[string]string `json:"namespaceLabels"`
	} `json:"internal"`
}

type traffic struct {
	Source      peer   `json:"source"`
	Destination peer   `json:"destination"`
	Port        int    `json:"port"`
	PortName    string `json:"portName"`
	Protocol    string `json:"protocol"`
	Ingress     bool   `json:"ingress"`
}

type world struct {
	Policies []*networkingv1.NetworkPolicy `json:"policies"`
	Traffic  []traffic                     `json:"traffic"`
}

func trafficPeer(p peer) *matcher.TrafficPeer {
	out := &matcher.TrafficPeer{IP: p.IP}
	if p.Internal != nil {
		out.Internal = &matcher.InternalPeer{
			Namespace:       p.Internal.Namespace,
			PodLabels:       p.Internal.PodLabels,
			NamespaceLabels: p.Internal.NamespaceLabels,
		}
	}
	return out
}

func main() {
	if len(os.Args) == 3 && os.Args[1] == "generate" {
		generate(os.Args[2])
		return
	}
	var worlds []world
	if err := json.NewDecoder(os.Stdin).Decode(&worlds); err != nil {
		fmt.Fprintf(os.Stderr, "netpol-cyclonus: reading input: %v\n", err)
		os.Exit(2)
	}
	verdicts := make([][]bool, len(worlds))
	for i, w := range worlds {
		policy := matcher.BuildNetworkPolicies(false, w.Policies)
		verdicts[i] = make([]bool, len(w.Traffic))
		for j, t := range w.Traffic {
			result := policy.IsIngressOrEgressAllowed(&matcher.Traffic{
				Source:           trafficPeer(t.Source),
				Destination:      trafficPeer(t.Destination),
				ResolvedPort:     t.Port,
				ResolvedPortName: t.PortName,
				Protocol:         v1.Protocol(t.Protocol),
			}, t.Ingress)
			verdicts[i][j] = result.IsAllowed()
		}
	}
	if err := json.NewEncoder(os.Stdout).Encode(verdicts); err != nil {
		fmt.Fprintf(os.Stderr, "netpol-cyclonus: writing output: %v\n", err)
		os.Exit(1)
	}
}
