#!/usr/bin/env bash
# Shallow water over the devices of one host (the multi-GPU issue), from binaries staged
# by `../shared/tools/stage-gpu -p shallow-water -p stencil-tests --features
# shallow-water/mpi --test gpu_block_grids --bin sw-ranks-check --bin sw-scaling`:
#   bash benchmarks/ranks-scaling.sh check    # ranks on devices equal the dense run
#   bash benchmarks/ranks-scaling.sh weak     # 8192^2 cells per device, 1 and 2 devices
#   bash benchmarks/ranks-scaling.sh strong   # 16384^2 cells in all, 1 and 2 devices
#   bash benchmarks/ranks-scaling.sh weak-clocked strong-clocked   # the same, steps
#                                   # decided on the devices (speeds all-reduced by NCCL)
#   bash benchmarks/ranks-scaling.sh malpasset  # Malpasset at 5 m to 4000 s, 1 and 2 devices
#   bash benchmarks/ranks-scaling.sh follow-clocked  # runs following the water with steps
#                                   # decided on the devices (STENCIL_FOLLOW_CLOCKED=1): the
#                                   # check on 1 and 2 ranks, then Malpasset on 2
# and the Poisson solver over devices, staged with `-p multigrid --features multigrid/mpi
# --bin poisson-ranks`:
#   bash benchmarks/ranks-scaling.sh poisson-check  # slabs on devices equal one device
#   bash benchmarks/ranks-scaling.sh poisson        # 8193^2 solves on 1 and 2 devices
#   bash benchmarks/ranks-scaling.sh issue          # the issue's whole set in one call:
#     the check on 1 and 2 ranks, weak (split across rows and across columns; also with
#     blocks kept whole; one rank on the second device alone) and strong (steps on the
#     devices), Malpasset, the Poisson solve gathered below 513 (all of the above staged)
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
poisson=multigrid-poisson-ranks
grep -q "^$poisson	bin" .gpu/MANIFEST || poisson=poisson-ranks
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
    weak-clocked)
      echo "== weak scaling, f32, 8192^2 cells per device, steps decided on the devices"
      "$run" $scaling 8192 8192 100 --clocked
      echo "-- 2 devices, the domain split across its rows (8192 x 16384: ghosts are rows)"
      mpi -np 2 "$run" $scaling 8192 16384 100 --clocked
      echo "-- 2 devices, the domain split across its columns (16384 x 8192: ghosts are columns)"
      mpi -np 2 "$run" $scaling 16384 8192 100 --clocked ;;
    strong-clocked)
      echo "== strong scaling, f32, 16384^2 cells in all, steps decided on the devices"
      "$run" $scaling 16384 16384 50 --clocked
      mpi -np 2 "$run" $scaling 16384 16384 50 --clocked ;;
    malpasset)
      echo "== Malpasset at 5 m to 4000 s, f32, blocks following the water"
      "$run" $scaling malpasset 3 4000
      mpi -np 2 "$run" $scaling malpasset 3 4000 ;;
    follow-clocked)
      # Runs following the water with their steps decided on the devices (off by default
      # until this check passes): the check's cases, then Malpasset's timing.
      for n in 1 2; do
        echo "== sw-ranks-check --device, $n rank(s), STENCIL_FOLLOW_CLOCKED=1 (rank 0's lines)"
        mpi -np $n -x STENCIL_FOLLOW_CLOCKED=1 "$run" $check --device | grep "^rank 0"
      done
      echo "== Malpasset at 5 m to 4000 s on 2 devices, following, steps decided on the devices"
      mpi -np 2 -x STENCIL_FOLLOW_CLOCKED=1 "$run" $scaling malpasset 3 4000 ;;
    issue)
      # One rank first: two ranks starting the staged binary at once can meet "Text file
      # busy" while the runner puts it in place.
      for n in 1 2; do
        echo "== sw-ranks-check --device, $n rank(s) (rank 0's lines)"
        mpi -np $n "$run" $check --device | grep "^rank 0"
      done
      bash "$0" weak-clocked
      echo "== weak, 2 devices, blocks next to ghosts kept whole (STENCIL_OVERLAP=whole)"
      mpi -np 2 -x STENCIL_OVERLAP=whole "$run" $scaling 8192 16384 100 --clocked
      echo "== one device alone, the second (CUDA_VISIBLE_DEVICES=1): is it the slower?"
      CUDA_VISIBLE_DEVICES=1 "$run" $scaling 8192 8192 100 --clocked
      bash "$0" strong-clocked malpasset
      echo "== Poisson 8193^2, one device, then two (levels gathered below 513 nodes per axis)"
      for p in "" --mixed; do "$run" $poisson time 8193 --device $p; done
      for p in "" --mixed; do mpi -np 2 "$run" $poisson time 8193 --device $p --gather-below 513; done ;;
    poisson-check)
      for n in 1 2; do echo "== poisson-ranks check --device, $n rank(s)"; mpi -np $n "$run" $poisson check --device; done ;;
    poisson)
      echo "== Poisson 8193^2, V(2,2) red-black to 1e-10, one device (the whole solver, fused)"
      for p in "" --mixed; do "$run" $poisson time 8193 --device $p; done
      echo "== two devices: levels gathered onto rank 0 below G nodes per axis"
      for p in "" --mixed; do
        for g in 513 1025 2049 4097; do mpi -np 2 "$run" $poisson time 8193 --device $p --gather-below $g; done
      done ;;
  esac
done
