# Does the CUDA driver compile PTX from two threads at once? (benchmarks/results/h100-jit-concurrency.md)
set -e
cd benchmarks/jit-concurrency
nvcc -O2 -o jit jit.c -lcuda -lpthread
export CUDA_CACHE_DISABLE=1
nproc; nvidia-smi --query-gpu=name --format=csv,noheader
for n in 1 2 4 8; do ./jit p4.ptx $n; done
for n in 2 4; do ./jit v1.ptx $n; done
for n in 1 3; do ./jit p4.ptx $n v1.ptx; done
