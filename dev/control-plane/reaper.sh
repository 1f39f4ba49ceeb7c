#!/usr/bin/env bash
# Cleans up after a control plane whose owner died without stopping it (SIGKILL, crash, a test run
# interrupted before its teardown). The owner starts this script in its own process group with a
# pipe on stdin and writes lines:
#   pgid <n>    a process group to terminate
#   dir <path>  a directory to remove
#   then <script> <args...>   a cleanup script run (by bash) after the groups are gone, e.g. the
#               node mode's teardown.sh (containers, mounts, network namespaces)
#   disarm      the owner cleaned up itself: do nothing
# End of input without "disarm" (the owner is gone: the kernel closed its end of the pipe) makes
# the reaper terminate the groups (TERM, then KILL after 10 s) and remove the directories.
# (Polling with sleep is acceptable here: the processes are not its children, so it cannot wait.)
set -u
groups=()
dirs=()
scripts=()
while IFS= read -r line; do
  case "$line" in
    "pgid "*) groups+=("${line#pgid }") ;;
    "dir "*) dirs+=("${line#dir }") ;;
    "then "*) scripts+=("${line#then }") ;;
    disarm) exit 0 ;;
  esac
done

# True while a process of group $1 is running (zombies do not count: their parent is gone too,
# and an init that does not reap would keep them forever).
alive() {
  ps -eo pgid=,stat= | awk -v g="$1" '$1 == g && $2 !~ /^Z/ { found = 1 } END { exit !found }'
}

# Newest group first (the API server before its etcd), TERM, then KILL after 10 s.
for ((i = ${#groups[@]} - 1; i >= 0; i--)); do
  g="${groups[i]}"
  kill -TERM -- "-$g" 2>/dev/null || continue
  for _ in $(seq 100); do
    alive "$g" || break
    sleep 0.1
  done
  kill -KILL -- "-$g" 2>/dev/null
done
for d in "${dirs[@]}"; do
  # only our own temporary directories
  case "$d" in */sdewan-cp-*) rm -rf -- "$d" ;; esac
done
for s in "${scripts[@]}"; do
  # shellcheck disable=SC2086 # the line is a script and its arguments, split on spaces
  bash $s >/dev/null 2>&1
done
