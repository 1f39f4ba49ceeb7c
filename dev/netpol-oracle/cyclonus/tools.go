//go:build tools

// The cyclonus command itself (`cyclonus generate`, run against the real node by
// test/node/netpol-cyclonus.test.ts), pinned with the oracle so one go.sum covers both.
package main

import (
	_ "github.com/mattfenwick/cyclonus/cmd/cyclonus"
)
