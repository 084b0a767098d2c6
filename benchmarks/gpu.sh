#!/usr/bin/env bash
# The GPU benchmark and GPU tests, run on a machine with an NVIDIA GPU, the driver and
# nvcc (no Rust needed there). On the development machine first:
#
#   ../shared/tools/stage-gpu -p stencil-tests -p stencil-runtime --no-default-features \
#       --test gpu_conformance --test backend_selection --bench gpu_stencils
#
# then, on the GPU machine, from the repository root with .gpu/ carried along:
#
#   benchmarks/gpu.sh [OUT_DIR]
#
# It builds the hand-written CUDA kernels with nvcc -O3 -arch=sm_90, runs the GPU tests,
# then the benchmark, which writes OUT_DIR/gpu_stencils.{md,csv} (default target/gpu-bench).
set -euo pipefail
root="$(cd -- "$(dirname -- "${BASH_SOURCE[0]}")/.." && pwd)"
out="${1:-$root/target/gpu-bench}"
mkdir -p "$out"
cd "$root"
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv | tee "$out/device.txt"
benchmarks/cuda/build.sh "$out/cuda" | grep "^cubin:"
status=0
.gpu/run backend_selection --nocapture || status=1
.gpu/run gpu_conformance --nocapture --test-threads=1 || status=1
export STENCIL_TUNE_CACHE="$out/launch-shapes.tsv"
.gpu/run gpu_stencils --cubin "$out/cuda/stencils.cubin" --out "$out" || status=1
exit $status
