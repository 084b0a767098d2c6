#!/usr/bin/env bash
# Runs every staged GPU test binary (ignored tests included), each with an empty tuning
# cache of its own, on a GPU machine, from binaries staged on the development machine with
#   ../shared/tools/stage-gpu -p stencil-tests -p multigrid -p cavity -p shallow-water \
#       -p mesh-smoothing -p six-kernels --test gpu_conformance --test gpu_kernels \
#       --test gpu --test gpu_block_grids --test six_kernels --test gpu_sass
# (gpu_sass skips unless built with STENCIL_SASS for the device: benchmarks/sass.sh)
# Prints each binary's result lines and a summary; exits non-zero if any failed.
set -u
r=.gpu/run
failed=0
# Every test binary the staging listed (a name that several packages share has its
# package as prefix for all but the first: `gpu`, `shallow-water-gpu`, ...).
for t in $(awk -F'\t' '$2 == "test" { print $1 }' .gpu/MANIFEST); do
  echo "=== $t"
  rm -f "/tmp/t-$t.tsv"
  if STENCIL_TUNE_CACHE="/tmp/t-$t.tsv" $r "$t" --include-ignored > "/tmp/t-$t.log" 2>&1; then
    grep -E "^test result|SKIPPED" "/tmp/t-$t.log" | sort | uniq -c
  else
    failed=$((failed + 1))
    grep -E "^test |panicked|^test result" "/tmp/t-$t.log" | grep -v " ok$" | head -30
  fi
done
echo "binaries failed: $failed"
exit $((failed > 0))
