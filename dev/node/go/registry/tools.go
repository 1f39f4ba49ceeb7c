//go:build tools

// Package tools pins the OCI registry of the node mode (dev/node) and crane, which pushes to it.
package tools

import (
	_ "github.com/distribution/distribution/v3/cmd/registry"
	_ "github.com/google/go-containerregistry/cmd/crane"
)
