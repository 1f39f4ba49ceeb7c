// sdewan-openfaas-render: answers OpenFaaS gateway requests (faas-cli deploy, secret create) as
// faas-netes CE would, with faas-netes's own code (handlers_sdewan.go) against a fake cluster,
// and prints the Kubernetes objects it would have created. The recording gateway stand-in
// (dev/openfaas/gateway.ts) runs it for every request it receives.
//
// dev/openfaas/build.sh copies this file into the unpacked faas-netes sources as
// cmd/sdewan-openfaas-render/main.go and builds it there; it is never built in this repository.
//
// Usage: sdewan-openfaas-render < input.json > results.json
// Input: {"namespace", "httpProbe", "setNonRootUser", "functions": [names that exist],
// "secrets": [{"name", "type", "keys"}], "requests": [{"kind": "deploy"|"secret", "method",
// "query", "body"}]}. Output: {"results": [{"status", "body", "objects", "notRun"}]}, one per
// request. Exit 0 when every request was answered (whatever the status), 2 on bad input.
package main

import (
	"encoding/json"
	"fmt"
	"io"
	"log"
	"os"

	"github.com/openfaas/faas-netes/pkg/handlers"
)

func main() {
	// faas-netes logs each step (log.Printf) to stderr; stdout carries only the results.
	log.SetOutput(os.Stderr)
	raw, err := io.ReadAll(os.Stdin)
	if err != nil {
		fail(err)
	}
	var input handlers.SdewanInput
	if err := json.Unmarshal(raw, &input); err != nil {
		fail(fmt.Errorf("input: %w", err))
	}
	if input.Namespace == "" {
		fail(fmt.Errorf("input: namespace is required"))
	}
	results, err := handlers.SdewanRun(input)
	if err != nil {
		fail(err)
	}
	out, err := json.Marshal(map[string]any{"results": results})
	if err != nil {
		fail(err)
	}
	if _, err := os.Stdout.Write(append(out, '\n')); err != nil {
		fail(err)
	}
}

func fail(err error) {
	fmt.Fprintf(os.Stderr, "sdewan-openfaas-render: %v\n", err)
	os.Exit(2)
}
