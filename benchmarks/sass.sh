#!/usr/bin/env bash
# SASS built ahead of time against PTX compiled by the driver (issue 30: first launches),
# on a GPU machine, from binaries staged on the development machine with SASS for the
# device's architecture (sm_90 for an H100 or H200):
#   CARGO_TARGET_DIR=/tmp/tsass STENCIL_SASS=sm_90 ../shared/tools/stage-gpu \
#       -p stencil-tests -p multigrid -p shallow-water --test gpu_sass \
#       --bench first_launch --bench kp07 --bench poisson_solve
# Every run is a fresh process with empty caches (a new tuning cache, the driver's cache of
# compiled PTX off); the PTX runs set STENCIL_PTX_ONLY=1, which makes the same binaries
# compile their PTX. First launches ROUNDS times (default 2), the steady state (kp07,
# the Poisson solve) STEADY_ROUNDS times (default 1), each round both ways.
set -u
r=.gpu/run
out=${OUT:-/tmp}
rounds=${ROUNDS:-2}
nvidia-smi --query-gpu=name,clocks.max.sm --format=csv,noheader
$r gpu_sass 2>&1 | grep -E "test |SKIPPED|result"
run() { # label ptx_only bench args...
  local label=$1 only=$2 bench=$3
  shift 3
  echo "=== $bench, $label"
  rm -f "$out/$bench-$label.tsv"
  CUDA_CACHE_DISABLE=1 STENCIL_PTX_ONLY=$only STENCIL_TUNE_CACHE="$out/$bench-$label.tsv" \
    $r "$bench" --bench "$@" 2>&1
}
# Alternating order: the PTX first in odd rounds.
order() { if [ $(($1 % 2)) -eq 1 ]; then echo "ptx sass"; else echo "sass ptx"; fi; }
only() { if [ "$1" = ptx ]; then echo 1; else echo 0; fi; }
for round in $(seq 1 "$rounds"); do
  for label in $(order "$round"); do
    run "$label" "$(only "$label")" first_launch | grep -E "^\||^device"
  done
done
for round in $(seq 1 "${STEADY_ROUNDS:-1}"); do
  for label in $(order "$round"); do
    run "$label" "$(only "$label")" kp07 --sizes 8192 | tail -4
    run "$label" "$(only "$label")" poisson_solve --sizes 4097 --sizes3d 257 | grep -E "^\| (4097|257)\^" | head -24
  done
done
