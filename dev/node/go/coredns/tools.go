//go:build tools

// Package tools pins CoreDNS, the cluster DNS of the node mode (dev/node).
package tools

import _ "github.com/coredns/coredns"
