#!/usr/bin/env bash
# Build the hand-written CUDA reference kernels (stencils.cu, kp07.cu) into cubins.
#
# Usage: benchmarks/cuda/build.sh [OUT_DIR]
#
#   OUT_DIR defaults to benchmarks/cuda/build (next to this script). Writes, for
#   NAME = stencils (the stencil-tests `gpu_stencils` bench loads it) and kp07 (the
#   shallow-water `kp07` bench, `--hand OUT_DIR/kp07.cubin`):
#     OUT_DIR/NAME.cubin      the sm_90 (H100 / H200) cubin
#     OUT_DIR/NAME.ptxas.txt  the `-Xptxas -v` resource report (registers,
#                             shared memory, spills) of every kernel
#     OUT_DIR/NAME.sass       the SASS listing, if cuobjdump is available
#
# nvcc is taken from $NVCC if set, else from PATH, else /usr/local/cuda/bin/nvcc.
# $NVCC_FLAGS, if set, adds flags to every compilation (e.g. NVCC_FLAGS=-fmad=false for
# code without contracted multiply-adds, as the generated kernels are).
# Works from any current directory.
set -euo pipefail

script_dir="$(cd -- "$(dirname -- "${BASH_SOURCE[0]}")" && pwd)"
out_dir="${1:-$script_dir/build}"

# Locate nvcc.
if [[ -n "${NVCC:-}" ]]; then
    nvcc="$NVCC"
elif command -v nvcc >/dev/null 2>&1; then
    nvcc="$(command -v nvcc)"
elif [[ -x /usr/local/cuda/bin/nvcc ]]; then
    nvcc=/usr/local/cuda/bin/nvcc
else
    echo "error: nvcc not found: it is neither on PATH nor at /usr/local/cuda/bin/nvcc." >&2
    echo "       Install the CUDA toolkit, add its bin/ to PATH, or set NVCC=/path/to/nvcc." >&2
    exit 1
fi
if [[ ! -x "$nvcc" ]]; then
    echo "error: nvcc at '$nvcc' is not executable" >&2
    exit 1
fi

mkdir -p "$out_dir"
echo "nvcc: $nvcc"

# SASS listings, if cuobjdump is on PATH or beside nvcc.
cuobjdump=""
if command -v cuobjdump >/dev/null 2>&1; then
    cuobjdump="$(command -v cuobjdump)"
elif [[ -x "$(dirname -- "$nvcc")/cuobjdump" ]]; then
    cuobjdump="$(dirname -- "$nvcc")/cuobjdump"
fi

for name in stencils kp07; do
    src="$script_dir/$name.cu"
    if [[ ! -f "$src" ]]; then
        echo "error: $src not found" >&2
        exit 1
    fi
    cubin="$out_dir/$name.cubin"
    # One compilation: the cubin, with ptxas's resource report (it goes to stderr)
    # shown and saved. pipefail makes a failed nvcc fail the script.
    # shellcheck disable=SC2086 # the extra flags are words
    "$nvcc" -O3 -arch=sm_90 ${NVCC_FLAGS:-} -cubin -Xptxas -v -o "$cubin" "$src" 2>&1 | tee "$out_dir/$name.ptxas.txt"
    if [[ -n "$cuobjdump" ]]; then
        "$cuobjdump" -sass "$cubin" >"$out_dir/$name.sass"
        echo "sass:  $out_dir/$name.sass"
    else
        echo "note: cuobjdump not found; no SASS listing written" >&2
    fi
    echo "ptxas report: $out_dir/$name.ptxas.txt"
    echo "cubin: $cubin"
done
