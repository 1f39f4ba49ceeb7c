# shellcheck shell=bash
# The steps every Go-tool bootstrap shares, sourced by each dev/*/build*.sh that builds with Go
# (control-plane, node, faas-cli, knative, kustomize, openfaas, upstream-ctrlr, netpol-oracle).
# Each script keeps its own interface (options,
# environment overrides, cache directory, what it prints, why it may skip); this file is how:
#
#   go_tool_init <label>                         log lines start "[<label> build]"
#   go_tool_parse_args <print option> <help lines> "$@"
#                                                sets $force and $print_only; --help prints the
#                                                script's header lines, an unknown option exits 2
#   go_tool_use_env_binary <VAR>                 $VAR names a binary: check it, print it, exit 0
#   go_mod_require <var> <go.mod> <module> <what>   sets <var> to the version go.mod requires
#   go_tool_cache_dir <name>                     ${XDG_CACHE_HOME:-~/.cache}/sdewan-functions/<name>
#   go_tool_cached_or_lock <dir> <result> <without Go> <hint> <GOFLAGS> <check> [args...]
#                                                the cache, else Go and <dir>'s build lock: below
#   go_tool_fail <reason>                        logs <reason>, exits 1 (a <without Go> handler)
#   go_tool_elapsed                              "1m05s" since the lock was taken
#   go_tool_count_deps <module dir> <package>    how many packages the build may compile
#   go_tool_find_archive <archive name>         sets $tools_archive to the archive's path, or to ""
#                                                with $tools_missing saying where it looked
#   go_tool_from_archive <archive name> <cache prefix> <result file> <what then>
#                                                a build from a vendored archive: sets $commit,
#                                                $out_dir and $tool_result (below)
#   go_tool_archive_unavailable <reason>         go_tool_unavailable for that build
#   go_tool_in_ci                                true when CI=true or CI=1 (.ci/run sets it)
#   go_tool_unavailable <dir> <result> <reason> <what then>
#                                                nothing can be built here: outside CI record the
#                                                reason in <dir>/UNAVAILABLE, print <result>, exit 0;
#                                                in CI exit 1 with the reason (nothing skips in CI)
#   go_tool_source_commit <var> <archive path>   sets <var> to the upstream commit the tools README
#                                                names for the archive (else "sha256-<12 hex>")
#   go_tool_unpack <archive path> <dir>          a fresh copy of the sources under <dir>
#   go_tool_build <module dir> <package> <output> <ldflags> <heartbeat> [--count-packages]
#                                                builds beside <output>, then moves it there;
#                                                <heartbeat> (a command) runs every 30 s meanwhile
#   go_tool_build_step <label> <module dir> <package> <output> <ldflags>
#                                                go_tool_build with the usual progress lines
#   go_tool_with_heartbeat <heartbeat> <command>...
#                                                runs <command>; <heartbeat> every 30 s meanwhile
#
# Output conventions, as the callers (.ci/run, the tests, dev/control-plane/binaries.ts, the demo)
# rely on: progress goes to stderr, never silent for more than 30 s (GO_TOOL_HEARTBEAT_S), and the
# result is the last line of stdout.

go_tool_label=""

go_tool_init() {
  go_tool_label="$1"
}

log() { printf '[%s build] %s\n' "$go_tool_label" "$*" >&2; }

go_tool_parse_args() {
  local print_option="$1" help_lines="$2" arg
  shift 2
  force=0
  print_only=0
  for arg in "$@"; do
    case "$arg" in
      --force) force=1 ;;
      "$print_option") print_only=1 ;;
      -h|--help) sed -n "${help_lines}p" "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
      *) echo "build.sh: unknown argument: $arg" >&2; exit 2 ;;
    esac
  done
}

go_tool_use_env_binary() {
  local var="$1"
  local value="${!var:-}"
  if [[ -z "$value" ]]; then return 0; fi
  if [[ ! -x "$value" ]]; then log "$var=$value is not executable"; exit 1; fi
  log "using $var=$value; nothing to build"
  echo "$value"
  exit 0
}

go_mod_require() {
  local _go_mod="$2" _module="$3" _what="$4" _required
  # A one-line `require m v` or a line of a `require (...)` block.
  _required="$(awk -v m="$_module" '$1 == "require" && $2 == m { print $3; exit }
    $1 == "require" && $2 == "(" { block = 1; next } block && $1 == ")" { block = 0 }
    block && $1 == m { print $2; exit }' "$_go_mod")"
  if [[ -z "$_required" ]]; then log "cannot read the $_what version from $_go_mod"; exit 1; fi
  # Underscored locals: the caller's variable may be called "version" or "module".
  printf -v "$1" '%s' "$_required"
}

go_tool_cache_dir() {
  echo "${XDG_CACHE_HOME:-$HOME/.cache}/sdewan-functions/$1"
}

# Sources of tools the Go module proxy refuses (faas-cli, Knative eventing) are kept, vendored, in
# a shared folder beside the checkout (its README.md names each archive's upstream commit):
# SDEWAN_TOOLS_DIR, else <repo>/../shared/tools, else /work/shared/tools.
go_tool_find_archive() {
  local name="$1" repo dir
  repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
  tools_archive=""
  tools_missing=""
  if [[ -n "${SDEWAN_TOOLS_DIR:-}" ]]; then
    if [[ -f "$SDEWAN_TOOLS_DIR/$name" ]]; then tools_archive="$SDEWAN_TOOLS_DIR/$name"; return 0; fi
    tools_missing="$name not found in SDEWAN_TOOLS_DIR=$SDEWAN_TOOLS_DIR"
    return 0
  fi
  for dir in "$repo/../shared/tools" /work/shared/tools; do
    if [[ -f "$dir/$name" ]]; then
      tools_archive="$(cd "$dir" && pwd)/$name"
      return 0
    fi
  done
  tools_missing="$name not found in $repo/../shared/tools nor /work/shared/tools (set SDEWAN_TOOLS_DIR)"
}

# go_tool_from_archive <archive name> <cache prefix> <result file> <what then>: where a build from
# a vendored archive goes. Sets $tools_archive, $commit (go_tool_source_commit), $out_dir
# (<cache>/<prefix>-<commit, 12 hex>) and $tool_result (<out_dir>/<result file>, or <out_dir> when
# the file is ""); with the print option, prints $tool_result and exits 0. No archive: the
# <prefix>-no-source directory and go_tool_archive_unavailable, which says <what then>.
go_tool_from_archive() {
  local archive="$1" prefix="$2" file="$3"
  go_tool_unavailable_then="$4"
  go_tool_find_archive "$archive"
  if [[ -z "$tools_archive" ]]; then
    go_tool_result_paths "$prefix-no-source" "$file"
    go_tool_archive_unavailable "$tools_missing"
  fi
  go_tool_source_commit commit "$tools_archive"
  go_tool_result_paths "$prefix-${commit:0:12}" "$file"
}

go_tool_result_paths() {
  out_dir="$(go_tool_cache_dir "$1")"
  tool_result="$out_dir${2:+/$2}"
  if [[ $print_only == 1 ]]; then echo "$tool_result"; exit 0; fi
}

# go_tool_archive_unavailable <reason>: go_tool_unavailable for the build go_tool_from_archive set
# up (also the <without Go> handler of its go_tool_cached_or_lock).
go_tool_archive_unavailable() {
  go_tool_unavailable "$out_dir" "$tool_result" "$1" "$go_tool_unavailable_then"
}

# The same test as test/support/in-ci.ts: CI=true (set by .ci/run) or CI=1.
go_tool_in_ci() {
  [[ "${CI:-}" == true || "${CI:-}" == 1 ]]
}

# Only a missing Go or a missing source archive (or, for the upstream controller, a module proxy
# that refuses) may make a tool unavailable, and only outside CI: there the tests that need it
# skip, with this reason. In CI every tool .ci/run builds must be there.
go_tool_unavailable() {
  local dir="$1" result="$2" reason="$3" consequence="$4"
  if go_tool_in_ci; then
    log "UNAVAILABLE: $reason"
    log "CI=true: every tool .ci/run builds must be there, so this fails (nothing skips in CI)."
    exit 1
  fi
  mkdir -p "$dir"
  printf '%s\n' "$reason" >"$dir/UNAVAILABLE"
  log "UNAVAILABLE: $reason"
  log "$consequence"
  echo "$result"
  exit 0
}

go_tool_source_commit() {
  local _archive="$2" _readme _commit _name
  _name="$(basename "$_archive")"
  _readme="$(dirname "$_archive")/README.md"
  _commit=""
  if [[ -f "$_readme" ]]; then
    _commit="$(grep -F "\`$_name\`" "$_readme" | grep -oE '\b[0-9a-f]{40}\b' | head -1 || true)"
  fi
  if [[ -z "$_commit" ]]; then
    _commit="sha256-$(sha256sum "$_archive" | cut -c1-12)"
  fi
  printf -v "$1" '%s' "$_commit"
}

go_tool_unpack() {
  local archive="$1" dir="$2"
  rm -rf "$dir" && mkdir -p "$dir"
  tar -xJf "$archive" -C "$dir"
}

go_tool_have() {
  local binary
  for binary in "$@"; do [[ -x "$binary" ]] || return 1; done
}

go_tool_fail() {
  log "$1"
  exit 1
}

go_tool_environment() {
  local extra=""
  if [[ $# -gt 0 ]]; then extra=" $*"; fi
  export GOTOOLCHAIN=local CGO_ENABLED=0 GOFLAGS="${GOFLAGS:-}$extra -buildvcs=false"
  go_tool_parallel="${GO_BUILD_PARALLEL:-2}"
}

# The heartbeat's period in seconds; only tests change it.
go_tool_heartbeat_s="${GO_TOOL_HEARTBEAT_S:-30}"

go_tool_with_heartbeat() {
  local heartbeat="$1" ticker status=0
  shift
  # stdout to /dev/null: a caller's $(...) must not wait for the ticker.
  ( while sleep "$go_tool_heartbeat_s" && kill -0 $$ 2>/dev/null; do "$heartbeat"; done ) >/dev/null &
  ticker=$!
  "$@" || status=$?
  kill "$ticker" 2>/dev/null || true
  wait "$ticker" 2>/dev/null || true
  return "$status"
}

# go_tool_cached_or_lock <dir> <result> <without Go> <hint> <GOFLAGS> <check> [args...]: every
# build's way in. Unless --force, `<check> [args...]` (go_tool_have <binaries>, or the script's own
# test with its source stamps) succeeding means the cache holds the build: print <result>, exit 0.
# Else $GO (default "go") must be there, or `<without Go> "'go' not found: <hint>"` runs
# (go_tool_fail, or the script's own go_tool_unavailable wrapper); then the Go environment
# (go_tool_environment <GOFLAGS>) and <dir>'s build lock, under which the check runs again.
go_tool_cached_or_lock() {
  local dir="$1" result="$2" without_go="$3" hint="$4" goflags="$5"
  shift 5
  if [[ $force == 0 ]] && "$@"; then
    log "cached: $result"
    echo "$result"
    exit 0
  fi
  GO="${GO:-go}"
  if ! command -v "$GO" >/dev/null; then "$without_go" "'$GO' not found: $hint"; fi
  # shellcheck disable=SC2086 # GOFLAGS words, as go_tool_environment takes them
  go_tool_environment $goflags
  go_tool_lock_then "$dir" "$result" "$@"
}

# Takes <dir>'s build lock (waiting, with a heartbeat, while another build holds it), then, unless
# --force, exits 0 printing <result> when `<check> [args...]` succeeds: what another process built
# meanwhile, judged by the caller's own test (binaries, or binaries and a source stamp).
go_tool_lock_then() {
  local dir="$1" result="$2"
  shift 2
  mkdir -p "$dir"
  # Two runs starting together (test runs, CI steps) must not both compile.
  exec 9>"$dir/.build.lock"
  if ! flock -n 9; then
    log "another build holds $dir/.build.lock; waiting for it"
    go_tool_lock_wait_start=$SECONDS
    go_tool_with_heartbeat go_tool_lock_waiting flock 9
  fi
  if [[ $force == 0 ]] && "$@"; then
    log "cached (built by another process): $result"
    echo "$result"
    exit 0
  fi
  go_tool_start=$SECONDS
}

go_tool_lock_waiting() {
  local s=$((SECONDS - go_tool_lock_wait_start))
  log "still waiting for the other build ($(printf '%dm%02ds' $((s / 60)) $((s % 60))))"
}

go_tool_elapsed() {
  local s=$((SECONDS - go_tool_start))
  printf '%dm%02ds' $((s / 60)) $((s % 60))
}

go_tool_count_deps() {
  (cd "$1" && "$GO" list -deps "$2" | wc -l)
}

# Packages compiled so far by a --count-packages build (for its heartbeat).
go_tool_compiled() {
  cat "$go_tool_count_file" 2>/dev/null
}

go_tool_build() {
  local dir="$1" pkg="$2" out="$3" ldflags="$4" heartbeat="$5" mode="${6:-}"
  local tmp="$out.tmp.$$" status=0 ticker line n=0
  go_tool_count_file="$out.count.$$"
  echo 0 >"$go_tool_count_file"
  # A heartbeat for the long quiet stretches (big packages, the link).
  ( while sleep "$go_tool_heartbeat_s" && kill -0 $$ 2>/dev/null; do "$heartbeat"; done ) >/dev/null &
  ticker=$!
  if [[ "$mode" == --count-packages ]]; then
    # go build -v names each package as it is compiled (cached ones are not named).
    { (cd "$dir" && "$GO" build -p "$go_tool_parallel" -v -trimpath -ldflags "$ldflags" \
        -o "$tmp" "$pkg" 2>&1) |
      while IFS= read -r line; do
        if [[ "$line" =~ ^[A-Za-z0-9_./~-]+$ ]]; then
          n=$((n + 1))
          echo "$n" >"$go_tool_count_file"
        else
          printf '%s\n' "$line" >&2
        fi
      done; } || status=$?
  else
    (cd "$dir" && "$GO" build -p "$go_tool_parallel" -trimpath -ldflags "$ldflags" \
      -o "$tmp" "$pkg") || status=$?
  fi
  kill "$ticker" 2>/dev/null || true
  wait "$ticker" 2>/dev/null || true
  rm -f "$go_tool_count_file"
  if [[ $status != 0 || ! -x "$tmp" ]]; then
    rm -f "$tmp"
    return 1
  fi
  mv -f "$tmp" "$out"
}

# go_tool_build_step <label> <module dir> <package> <output> <ldflags>: go_tool_build with the
# progress every bootstrap prints (module resolution, the package count, a line every 30 s, the
# result), and the command to rerun by hand when it fails.
go_tool_build_step() {
  local label="$1" dir="$2" pkg="$3" out="$4" ldflags="$5" total
  log "$label: resolving and downloading modules ($(go_tool_elapsed) elapsed)"
  # Quiet for minutes on a cold module cache.
  resolving() { log "$label: still resolving and downloading modules ($(go_tool_elapsed) elapsed)"; }
  total="$(go_tool_with_heartbeat resolving go_tool_count_deps "$dir" "$pkg")"
  log "$label: compiling up to $total packages with go build -p $go_tool_parallel ($(go_tool_elapsed) elapsed)"
  progress() { log "$label: $(go_tool_compiled)/$total packages compiled ($(go_tool_elapsed) elapsed)"; }
  if ! go_tool_build "$dir" "$pkg" "$out" "$ldflags" progress --count-packages; then
    log "$label: go build failed. To see why, run:"
    log "  cd $dir && GOTOOLCHAIN=local CGO_ENABLED=0 go build -o /tmp/$label $pkg"
    exit 1
  fi
  log "$label: built $out ($(go_tool_elapsed) elapsed)"
}
