#!/usr/bin/env bash
# Build the hand-written CUDA reference kernels (stencils.cu) into a cubin.
#
# Usage: benchmarks/cuda/build.sh [OUT_DIR]
#
#   OUT_DIR defaults to benchmarks/cuda/build (next to this script). Writes:
#     OUT_DIR/stencils.cubin  the sm_90 (H100 / H200) cubin the benchmark loads
#     OUT_DIR/ptxas.txt       the `-Xptxas -v` resource report (registers,
#                             shared memory, spills) of every kernel
#     OUT_DIR/stencils.sass   the SASS listing, if cuobjdump is available
#
# nvcc is taken from $NVCC if set, else from PATH, else /usr/local/cuda/bin/nvcc.
# Works from any current directory.
set -euo pipefail

script_dir="$(cd -- "$(dirname -- "${BASH_SOURCE[0]}")" && pwd)"
src="$script_dir/stencils.cu"
out_dir="${1:-$script_dir/build}"

if [[ ! -f "$src" ]]; then
    echo "error: $src not found" >&2
    exit 1
fi

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
cubin="$out_dir/stencils.cubin"

echo "nvcc: $nvcc"
# One compilation: the cubin, with ptxas's resource report (it goes to stderr)
# shown and saved. pipefail makes a failed nvcc fail the script.
"$nvcc" -O3 -arch=sm_90 -cubin -Xptxas -v -o "$cubin" "$src" 2>&1 | tee "$out_dir/ptxas.txt"

# SASS listing, if cuobjdump is on PATH or beside nvcc.
cuobjdump=""
if command -v cuobjdump >/dev/null 2>&1; then
    cuobjdump="$(command -v cuobjdump)"
elif [[ -x "$(dirname -- "$nvcc")/cuobjdump" ]]; then
    cuobjdump="$(dirname -- "$nvcc")/cuobjdump"
fi
if [[ -n "$cuobjdump" ]]; then
    "$cuobjdump" -sass "$cubin" >"$out_dir/stencils.sass"
    echo "sass:  $out_dir/stencils.sass"
else
    echo "note: cuobjdump not found; no SASS listing written" >&2
fi

echo "ptxas report: $out_dir/ptxas.txt"
echo "cubin: $cubin"
