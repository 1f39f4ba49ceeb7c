//go:build tools

// Package tools pins the commands this module builds (the node mode of dev/node), so `go mod tidy`
// keeps their dependencies. Same k8s.io/kubernetes version and staging replaces as the API server's.
package tools

import (
	_ "k8s.io/kubernetes/cmd/kube-controller-manager"
	_ "k8s.io/kubernetes/cmd/kube-proxy"
	_ "k8s.io/kubernetes/cmd/kube-scheduler"
	_ "k8s.io/kubernetes/cmd/kubectl"
	_ "k8s.io/kubernetes/cmd/kubelet"
	_ "k8s.io/kubernetes/test/images/agnhost"
)
