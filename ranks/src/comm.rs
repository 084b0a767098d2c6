//! [`Ranks`]: this process among the processes of a run.

use std::sync::{Arc, Mutex};
use stencil_runtime::cuda::Nccl;
use stencil_runtime::Cuda;

/// The number of ranks `mpirun` started, read from its environment (`None`: not started
/// by mpirun).
fn launched_size() -> Option<usize> {
    ["OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "PMIX_SIZE"]
        .iter()
        .find_map(|v| std::env::var(v).ok()?.parse().ok())
}

/// This rank's index among the ranks on its node (which device it takes), from `mpirun`'s
/// environment (with MPI, the ranks ask MPI instead: `World::node_rank`).
#[cfg(not(feature = "mpi"))]
fn launched_local_rank() -> Option<usize> {
    [
        "OMPI_COMM_WORLD_LOCAL_RANK",
        "MPI_LOCALRANKID",
        "PMIX_LOCAL_RANK",
    ]
    .iter()
    .find_map(|v| std::env::var(v).ok()?.parse().ok())
}

/// What went wrong between ranks.
#[derive(Debug, thiserror::Error)]
pub enum RanksError {
    /// `mpirun` started several ranks of a program built without MPI.
    #[error("mpirun started {size} ranks, but this program was built without MPI: build it with `--features mpi` (Debian: apt install openmpi-bin libopenmpi-dev libclang-dev), or run it without mpirun")]
    NoMpi {
        /// The ranks mpirun started.
        size: usize,
    },
    /// MPI could not be started.
    #[error("MPI could not be initialised (was it initialised twice?)")]
    Init,
    /// A grid too small to give every rank a slab.
    #[error("a grid of {n} planes cannot give each of {size} ranks a slab starting at a multiple of {align} planes (the alignment that the coarser grids split the same way need): use fewer ranks, a larger grid, or fewer split grids (for multigrid, a larger `gather_below`)")]
    TooFewPlanes {
        /// The planes along the split axis.
        n: usize,
        /// The ranks.
        size: usize,
        /// The alignment of the slabs' starts.
        align: usize,
    },
    /// A message to or from a rank that does not exist.
    #[error("rank {rank} does not exist: the run has {size} ranks")]
    NoSuchRank {
        /// The rank named.
        rank: usize,
        /// The ranks there are.
        size: usize,
    },
    /// A message shorter than the receiver expected: the ranks disagree about what they
    /// exchange (a longer one stops the run in MPI itself).
    #[error("rank {from} sent {got} values where {expected} were expected: the ranks disagree about the layout they exchange")]
    ShortMessage {
        /// The sender.
        from: usize,
        /// The values that came.
        got: usize,
        /// The values expected.
        expected: usize,
    },
    /// Some ranks run on devices and others on the CPU.
    #[error(
        "some ranks run on devices and others on the CPU: give every rank the same kind of backend"
    )]
    MixedBackends,
    /// A rank lacks NCCL, or NCCL failed.
    #[error("{0}")]
    Device(Box<stencil_runtime::Error>),
    /// Another rank could not start NCCL.
    #[error("another rank could not start NCCL (see its error)")]
    NcclElsewhere,
    /// Another rank failed in a step every rank takes together.
    #[error("another rank failed while {during} (see its error)")]
    FailedElsewhere {
        /// What the ranks were doing.
        during: &'static str,
    },
}

impl RanksError {
    /// A device error on this rank (NCCL).
    pub fn device(e: stencil_runtime::Error) -> RanksError {
        RanksError::Device(Box::new(e))
    }
}

/// How values from every rank combine.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Op {
    /// The sum (in rank order on one rank; MPI's order otherwise).
    Sum,
    /// The largest.
    Max,
    /// The smallest.
    Min,
}

/// This process among the ranks of a run: one process per device (or CPU), started by
/// `mpirun`; a program started without it is rank 0 of 1.
pub struct Ranks {
    rank: usize,
    size: usize,
    local_rank: usize,
    #[cfg(feature = "mpi")]
    mpi: Option<mpi_world::World>,
    /// The ranks' NCCL communicator, once a device exchange asked for it.
    nccl: Mutex<Option<Arc<Nccl>>>,
}

impl std::fmt::Debug for Ranks {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Ranks {{ rank: {}, size: {} }}", self.rank, self.size)
    }
}

impl Ranks {
    /// One rank alone.
    pub fn single() -> Ranks {
        Ranks {
            rank: 0,
            size: 1,
            local_rank: 0,
            #[cfg(feature = "mpi")]
            mpi: None,
            nccl: Mutex::new(None),
        }
    }

    /// The ranks `mpirun` started this process among (with the `mpi` feature), or one
    /// rank alone when it was started without mpirun. Several ranks of a program built
    /// without MPI are [`RanksError::NoMpi`].
    pub fn from_env() -> Result<Ranks, RanksError> {
        let Some(launched) = launched_size() else {
            return Ok(Ranks::single());
        };
        #[cfg(feature = "mpi")]
        {
            let _ = launched;
            let world = mpi_world::World::start().ok_or(RanksError::Init)?;
            let (rank, size) = world.rank_and_size();
            Ok(Ranks {
                rank,
                size,
                local_rank: world.node_rank(),
                mpi: Some(world),
                nccl: Mutex::new(None),
            })
        }
        #[cfg(not(feature = "mpi"))]
        {
            if launched > 1 {
                return Err(RanksError::NoMpi { size: launched });
            }
            Ok(Ranks {
                local_rank: launched_local_rank().unwrap_or(0),
                ..Ranks::single()
            })
        }
    }

    /// This rank, from 0.
    pub fn rank(&self) -> usize {
        self.rank
    }

    /// How many ranks the run has.
    pub fn size(&self) -> usize {
        self.size
    }

    /// This rank's index on its node: the device it takes (`cuda:N`).
    pub fn local_rank(&self) -> usize {
        self.local_rank
    }

    /// Combines `values` element by element over every rank; each rank gets the result.
    pub fn all_reduce(&self, values: &mut [f64], op: Op) {
        #[cfg(feature = "mpi")]
        if let Some(world) = &self.mpi {
            world.all_reduce(values, op);
        }
        let _ = (values, op);
    }

    /// Makes `values` on every rank the owners' values: entry `k` takes the value of the
    /// one rank whose `owned[k]` is true, bit for bit for numbers (a negative zero stays
    /// one) and NaN wherever the owner holds a NaN (as a quiet NaN): an all-reduced
    /// maximum over the owner's value and minus infinity elsewhere, with a second half
    /// that marks the NaNs, whose maximum MPI does not define. Nothing moves on one rank.
    pub fn gather_owned(&self, owned: &[bool], values: &mut [f64]) {
        if self.size == 1 {
            return;
        }
        let n = values.len();
        let mut both = Vec::with_capacity(2 * n);
        let mine = |k: usize| owned.get(k).copied().unwrap_or(false);
        both.extend((0..n).map(|k| match mine(k) {
            true if !values[k].is_nan() => values[k],
            _ => f64::NEG_INFINITY,
        }));
        both.extend((0..n).map(|k| {
            if mine(k) && values[k].is_nan() {
                1.0
            } else {
                0.0
            }
        }));
        self.all_reduce(&mut both, Op::Max);
        for k in 0..n {
            values[k] = if both[n + k] > 0.0 { f64::NAN } else { both[k] };
        }
    }

    /// Sends each `(rank, values)` of `sends` and receives, for each `(rank, len)` of
    /// `receives`, `len` values from that rank, all at once (no rank waits for another's
    /// turn); returns the received values in the order of `receives`. Messages from one
    /// rank to another arrive in the order they were sent. On one rank there is no one to
    /// exchange with: both lists must be empty.
    pub fn exchange(
        &self,
        sends: &[(usize, Vec<f64>)],
        receives: &[(usize, usize)],
    ) -> Result<Vec<Vec<f64>>, RanksError> {
        for &rank in sends
            .iter()
            .map(|(r, _)| r)
            .chain(receives.iter().map(|(r, _)| r))
        {
            if rank >= self.size || (self.size == 1 && rank == 0) {
                return Err(RanksError::NoSuchRank {
                    rank,
                    size: self.size,
                });
            }
        }
        #[cfg_attr(not(feature = "mpi"), allow(unused_mut))]
        let mut received: Vec<Vec<f64>> = receives.iter().map(|&(_, n)| vec![0.0; n]).collect();
        #[cfg(feature = "mpi")]
        if let Some(world) = &self.mpi {
            world.exchange(sends, receives, &mut received)?;
        }
        Ok(received)
    }

    /// Makes `bytes` on every rank what they are on rank `root`.
    pub fn broadcast(&self, root: usize, bytes: &mut [u8]) {
        #[cfg(feature = "mpi")]
        if let Some(world) = &self.mpi {
            world.broadcast(root, bytes);
        }
        let _ = (root, bytes);
    }

    /// Whether every rank says `yes`.
    pub fn all(&self, yes: bool) -> bool {
        let mut v = [if yes { 1.0 } else { 0.0 }];
        self.all_reduce(&mut v, Op::Min);
        v[0] > 0.0
    }

    /// The ranks' NCCL communicator on `cuda`'s device, made the first time
    /// (every rank must ask at the same point: it is a collective call) and shared after.
    /// A rank without NCCL makes it an error on every rank, never a wait.
    pub fn nccl(&self, cuda: &Cuda) -> Result<Arc<Nccl>, RanksError> {
        let mut held = self.nccl.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(n) = held.as_ref() {
            if n.cuda().ordinal() != cuda.ordinal() {
                return Err(RanksError::device(stencil_runtime::Error::InvalidField(
                    format!(
                    "this rank's NCCL communicator is on device {}, not {}: a rank uses one device",
                    n.cuda().ordinal(),
                    cuda.ordinal()
                ),
                )));
            }
            return Ok(n.clone());
        }
        // Rank 0 makes the id and sends it with a flag saying whether it could.
        let mut message = [0u8; 129];
        let mine = if self.rank == 0 {
            Nccl::unique_id().map(|id| {
                message[..128].copy_from_slice(&id);
                message[128] = 1;
            })
        } else {
            Nccl::available()
        };
        if !self.all(mine.is_ok()) {
            return Err(match mine {
                Err(e) => RanksError::device(e),
                Ok(()) => RanksError::NcclElsewhere,
            });
        }
        self.broadcast(0, &mut message);
        let mut id = [0u8; 128];
        id.copy_from_slice(&message[..128]);
        let nccl =
            Arc::new(Nccl::new(cuda, &id, self.rank, self.size).map_err(RanksError::device)?);
        *held = Some(nccl.clone());
        Ok(nccl)
    }

    /// Stops every rank of the run, after printing `error` with this rank's number: a
    /// failure on one rank never leaves the others waiting for it.
    pub fn abort(&self, error: &dyn std::fmt::Display) -> ! {
        eprintln!("error on rank {} of {}: {error}", self.rank, self.size);
        #[cfg(feature = "mpi")]
        if let Some(world) = &self.mpi {
            world.abort();
        }
        std::process::exit(1)
    }
}

#[cfg(feature = "mpi")]
mod mpi_world {
    //! The MPI side of [`super::Ranks`].

    use super::{Op, RanksError};
    use mpi::collective::SystemOperation;
    use mpi::traits::*;

    /// MPI, started, and its world communicator.
    pub struct World {
        world: mpi::topology::SimpleCommunicator,
        // Declared last, so dropped last: finalises MPI.
        _universe: mpi::environment::Universe,
    }

    impl World {
        /// Starts MPI (`None` if it was started already), for a program whose main thread
        /// makes every MPI call while worker threads compute (`Funneled`). A panic on
        /// this rank then stops every rank: unwinding would otherwise finalise MPI here
        /// while the others wait for this rank's messages.
        pub fn start() -> Option<World> {
            let (universe, _) = mpi::initialize_with_threading(mpi::Threading::Funneled)?;
            let world = universe.world();
            let report = std::panic::take_hook();
            std::panic::set_hook(Box::new(move |info| {
                report(info);
                // SAFETY: MPI is initialised (above); aborting the world communicator
                // ends every rank's process.
                unsafe {
                    mpi::ffi::MPI_Abort(mpi::ffi::RSMPI_COMM_WORLD, 101);
                }
            }));
            Some(World {
                world,
                _universe: universe,
            })
        }

        pub fn rank_and_size(&self) -> (usize, usize) {
            (self.world.rank() as usize, self.world.size() as usize)
        }

        /// This rank's index among the ranks that share its node's memory (MPI's
        /// shared-memory split, ordered by world rank): the device it takes, whichever
        /// launcher started the ranks (`mpirun`, `srun`, `mpiexec` of another MPI).
        pub fn node_rank(&self) -> usize {
            self.world.split_shared(self.world.rank()).rank() as usize
        }

        pub fn all_reduce(&self, values: &mut [f64], op: Op) {
            let send = values.to_vec();
            let op = match op {
                Op::Sum => SystemOperation::sum(),
                Op::Max => SystemOperation::max(),
                Op::Min => SystemOperation::min(),
            };
            self.world.all_reduce_into(&send[..], values, op);
        }

        /// Sends `sends` and receives `receives` into `received`, all at once; an error if
        /// a message is shorter than its buffer.
        pub fn exchange(
            &self,
            sends: &[(usize, Vec<f64>)],
            receives: &[(usize, usize)],
            received: &mut [Vec<f64>],
        ) -> Result<(), RanksError> {
            let mut counts = Vec::with_capacity(receives.len());
            mpi::request::scope(|scope| {
                let mut incoming = Vec::new();
                for ((rank, _), buf) in receives.iter().zip(received.iter_mut()) {
                    let from = self.world.process_at_rank(*rank as i32);
                    incoming.push(from.immediate_receive_into(scope, &mut buf[..]));
                }
                let mut outgoing = Vec::new();
                for (rank, values) in sends {
                    let to = self.world.process_at_rank(*rank as i32);
                    outgoing.push(to.immediate_send(scope, &values[..]));
                }
                for request in incoming {
                    counts.push(request.wait().count(f64::equivalent_datatype()));
                }
                for request in outgoing {
                    request.wait();
                }
            });
            for (&(from, expected), got) in receives.iter().zip(counts) {
                if got as usize != expected {
                    return Err(RanksError::ShortMessage {
                        from,
                        got: got.max(0) as usize,
                        expected,
                    });
                }
            }
            Ok(())
        }

        pub fn broadcast(&self, root: usize, bytes: &mut [u8]) {
            self.world
                .process_at_rank(root as i32)
                .broadcast_into(bytes);
        }

        pub fn abort(&self) -> ! {
            self.world.abort(1)
        }
    }
}
