package main

import (
	"encoding/json"
	"fmt"
	"os"
	"sort"

	"github.com/mattfenwick/cyclonus/pkg/generator"
	networkingv1 "k8s.io/api/networking/v1"
)

// The model cyclonus's conformance runs use: namespaces x, y, z labelled ns=<name>, each with
// Pods a, b, c labelled pod=<name> (pkg/connectivity/probe).
var (
	modelNamespaces = []string{"x", "y", "z"}
	modelPods       = []string{"a", "b", "c"}
)

type generatedPod struct {
	Namespace string            `json:"namespace"`
	Name      string            `json:"name"`
	Labels    map[string]string `json:"labels"`
}

type generatedProbe struct {
	AllAvailable bool        `json:"allAvailable"`
	Port         interface{} `json:"port,omitempty"`
	Protocol     string      `json:"protocol,omitempty"`
}

type generatedStep struct {
	Policies   []*networkingv1.NetworkPolicy `json:"policies"`
	Namespaces map[string]map[string]string  `json:"namespaces"`
	Pods       []generatedPod                `json:"pods"`
	Probe      generatedProbe                `json:"probe"`
}

type generatedCase struct {
	Description string          `json:"description"`
	Steps       []generatedStep `json:"steps"`
}

type state struct {
	policies   map[string]*networkingv1.NetworkPolicy
	namespaces map[string]map[string]string
	pods       map[string]generatedPod
}

func newState() *state {
	s := &state{
		policies:   map[string]*networkingv1.NetworkPolicy{},
		namespaces: map[string]map[string]string{},
		pods:       map[string]generatedPod{},
	}
	for _, ns := range modelNamespaces {
		s.namespaces[ns] = map[string]string{"ns": ns}
		for _, pod := range modelPods {
			s.pods[ns+"/"+pod] = generatedPod{Namespace: ns, Name: pod, Labels: map[string]string{"pod": pod}}
		}
	}
	return s
}

func (s *state) apply(a *generator.Action) {
	switch {
	case a.CreatePolicy != nil:
		p := a.CreatePolicy.Policy
		s.policies[p.Namespace+"/"+p.Name] = p
	case a.UpdatePolicy != nil:
		p := a.UpdatePolicy.Policy
		s.policies[p.Namespace+"/"+p.Name] = p
	case a.DeletePolicy != nil:
		delete(s.policies, a.DeletePolicy.Namespace+"/"+a.DeletePolicy.Name)
	case a.CreateNamespace != nil:
		s.namespaces[a.CreateNamespace.Namespace] = a.CreateNamespace.Labels
	case a.SetNamespaceLabels != nil:
		s.namespaces[a.SetNamespaceLabels.Namespace] = a.SetNamespaceLabels.Labels
	case a.DeleteNamespace != nil:
		ns := a.DeleteNamespace.Namespace
		delete(s.namespaces, ns)
		for key, pod := range s.pods {
			if pod.Namespace == ns {
				delete(s.pods, key)
			}
		}
		for key, p := range s.policies {
			if p.Namespace == ns {
				delete(s.policies, key)
			}
		}
	case a.CreatePod != nil:
		c := a.CreatePod
		s.pods[c.Namespace+"/"+c.Pod] = generatedPod{Namespace: c.Namespace, Name: c.Pod, Labels: c.Labels}
	case a.SetPodLabels != nil:
		c := a.SetPodLabels
		s.pods[c.Namespace+"/"+c.Pod] = generatedPod{Namespace: c.Namespace, Name: c.Pod, Labels: c.Labels}
	case a.DeletePod != nil:
		delete(s.pods, a.DeletePod.Namespace+"/"+a.DeletePod.Pod)
	}
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

func (s *state) snapshot(probe *generator.ProbeConfig) generatedStep {
	step := generatedStep{Namespaces: map[string]map[string]string{}}
	for _, key := range sortedKeys(s.policies) {
		step.Policies = append(step.Policies, s.policies[key])
	}
	for ns, labels := range s.namespaces {
		step.Namespaces[ns] = labels
	}
	for _, key := range sortedKeys(s.pods) {
		step.Pods = append(step.Pods, s.pods[key])
	}
	if probe != nil {
		step.Probe.AllAvailable = probe.AllAvailable
		if probe.PortProtocol != nil {
			step.Probe.Port = probe.PortProtocol.Port
			step.Probe.Protocol = string(probe.PortProtocol.Protocol)
		}
	}
	return step
}

// generate prints every generated test case, each step as the world after its actions.
func generate(podIP string) {
	cases := generator.NewTestCaseGenerator(false, podIP, modelNamespaces, nil, nil).GenerateTestCases()
	out := make([]generatedCase, 0, len(cases))
	for _, c := range cases {
		s := newState()
		gc := generatedCase{Description: c.Description}
		for _, step := range c.Steps {
			for _, a := range step.Actions {
				s.apply(a)
			}
			gc.Steps = append(gc.Steps, s.snapshot(step.Probe))
		}
		out = append(out, gc)
	}
	if err := json.NewEncoder(os.Stdout).Encode(out); err != nil {
		fmt.Fprintf(os.Stderr, "netpol-cyclonus: writing output: %v\n", err)
		os.Exit(1)
	}
}
