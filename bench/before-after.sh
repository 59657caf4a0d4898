#!/usr/bin/env bash
# `bench/before-after.sh <ref> <bench> [pairs]`: runs `npm run bench:<bench>` on the code of <ref>
# (a git worktree of it, sharing this checkout's node_modules) and on this checkout, taking turns
# (before, after, before, after, ...: `pairs` times, 1 by default), so that load from elsewhere on
# the machine falls on both alike. Each run's output goes to bench-out/<bench>-<before|after>-<n>.txt
# and its result tables are printed. Extra BENCH_* variables pass through to both.
# Used for "not slower" checks of a refactoring (docs/benchmarks.md, "Before and after").
set -euo pipefail
cd "$(dirname "$0")/.."
ref=${1:?usage: bench/before-after.sh <ref> <bench> [pairs]}
bench=${2:?usage: bench/before-after.sh <ref> <bench> [pairs]}
pairs=${3:-1}
sha=$(git rev-parse --short "$ref")
before="${TMPDIR:-/tmp}/ims-before-$sha"
if [ ! -d "$before" ]; then
  git worktree add --detach "$before" "$sha" >/dev/null
  ln -s "$PWD/node_modules" "$before/node_modules"
fi
mkdir -p bench-out
echo "before: $sha ($before)   after: $(git rev-parse --short HEAD)$(git diff --quiet || echo ' + uncommitted changes')"
for n in $(seq 1 "$pairs"); do
  for side in before after; do
    dir=$PWD; [ "$side" = before ] && dir=$before
    out="bench-out/$bench-$side-$n.txt"
    echo "== $side, run $n/$pairs ($(date -u +%H:%M:%S) UTC, load $(cut -d' ' -f1 /proc/loadavg))"
    (cd "$dir" && npm run --silent "bench:$bench") >"$out" 2>&1 || { echo "bench:$bench failed on $side: see $out"; exit 1; }
    # The result tables and the target lines, without the per-round progress.
    grep -E '^\||^\(|targets?:|^[A-Z].*(auth|readings)' "$out" || tail -20 "$out"
  done
done
