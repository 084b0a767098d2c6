#!/usr/bin/env bash
# Shallow water over the devices of one host (the multi-GPU issue), from binaries staged
# by `../shared/tools/stage-gpu -p shallow-water -p stencil-tests --features
# shallow-water/mpi --test gpu_block_grids --bin sw-ranks-check --bin sw-scaling`:
#   bash benchmarks/ranks-scaling.sh check    # ranks on devices equal the dense run
#   bash benchmarks/ranks-scaling.sh weak     # 8192^2 cells per device, 1 and 2 devices
#   bash benchmarks/ranks-scaling.sh strong   # 16384^2 cells in all, 1 and 2 devices
# Needs Open MPI's mpirun and NCCL (libnccl.so.2) on the machine. NVLink multicast stays
# off (NCCL_NVLS_ENABLE=0), as the device notes ask.
set -u
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
export OMPI_MCA_btl_vader_single_copy_mechanism=none
mpi() {
  mpirun --allow-run-as-root --oversubscribe -x NCCL_NVLS_ENABLE -x OMPI_MCA_btl_vader_single_copy_mechanism "$@"
}
run=.gpu/run
scaling=shallow-water-sw-scaling
grep -q "^$scaling	bin" .gpu/MANIFEST || scaling=sw-scaling
check=shallow-water-sw-ranks-check
grep -q "^$check	bin" .gpu/MANIFEST || check=sw-ranks-check
nvidia-smi --query-gpu=name,memory.total --format=csv,noheader
for what in "$@"; do
  case $what in
    check)
      "$run" gpu_block_grids
      for n in 1 2; do echo "== sw-ranks-check --device, $n rank(s)"; mpi -np $n "$run" $check --device; done ;;
    weak)
      echo "== weak scaling, f32, 8192^2 cells per device"
      "$run" $scaling 8192 8192 100
      mpi -np 2 "$run" $scaling 16384 8192 100 ;;
    strong)
      echo "== strong scaling, f32, 16384^2 cells in all"
      "$run" $scaling 16384 16384 50
      mpi -np 2 "$run" $scaling 16384 16384 50 ;;
  esac
done
