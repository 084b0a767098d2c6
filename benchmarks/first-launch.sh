#!/usr/bin/env bash
# First launches and steady state under both tuning policies (issue 30), on a GPU machine,
# from binaries staged on the development machine with
#   ../shared/tools/stage-gpu -p stencil-tests -p multigrid -p shallow-water \
#       --bench first_launch --bench kp07 --bench poisson_solve
# Each policy runs in a fresh process with empty caches: the tuning cache a new file, the
# driver's cache of compiled PTX off (CUDA_CACHE_DISABLE=1).
set -u
r=.gpu/run
out=${OUT:-/tmp}
nvidia-smi --query-gpu=name,clocks.max.sm --format=csv,noheader
for policy in on search; do
  echo "=== first_launch STENCIL_TUNE=$policy"
  rm -f "$out/first-$policy.tsv"
  CUDA_CACHE_DISABLE=1 STENCIL_TUNE=$policy STENCIL_TUNE_CACHE="$out/first-$policy.tsv" \
    $r first_launch --bench 2>&1 | tail -20
done
for policy in on search; do
  echo "=== kp07 STENCIL_TUNE=$policy"
  rm -f "$out/kp07-$policy.tsv"
  CUDA_CACHE_DISABLE=1 STENCIL_TUNE=$policy STENCIL_TUNE_CACHE="$out/kp07-$policy.tsv" \
    $r kp07 --bench --sizes 8192 2>&1 | tail -4
  echo "=== poisson_solve STENCIL_TUNE=$policy"
  rm -f "$out/poisson-$policy.tsv"
  CUDA_CACHE_DISABLE=1 STENCIL_TUNE=$policy STENCIL_TUNE_CACHE="$out/poisson-$policy.tsv" \
    $r poisson_solve --bench --sizes 4097 --sizes3d 257 2>&1 | grep -E "^\| (4097|257)\^" | head -24
done
