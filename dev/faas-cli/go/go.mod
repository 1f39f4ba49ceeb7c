// Wrapper module: builds faas-cli (github.com/openfaas/faas-cli) with the machine's Go, for CI's
// stack.yml checks (faas-cli build --shrinkwrap, faas-cli generate). No go.sum is committed: the
// build script resolves it in a scratch copy under the cache (dev/faas-cli/build.sh).
module sdewan-functions/dev/faas-cli

go 1.26.0

require github.com/openfaas/faas-cli v0.18.12
