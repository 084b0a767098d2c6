//! [`GhostExchange`]: a rank's ghost blocks filled from their owners, planned once per
//! layout and set of fields, on the CPU over MPI and on devices over NCCL.

use crate::{LayoutError, RankLayout, Ranks, RanksError};
use std::ops::Range;
use std::sync::Arc;
use stencil_runtime::blocks::PointPack;
use stencil_runtime::cuda::Nccl;
use stencil_runtime::{Backend, BlockField, BlockGrid, BlockKey, Cuda, Real};

/// Environment variable that, set to `normal`, queues the ghosts' messages on a stream of
/// normal priority instead of the device's highest (for measuring what the priority
/// gives).
pub const HALO_PRIORITY_ENV: &str = "STENCIL_HALO_PRIORITY";

/// The ghost fill of a number of fields of one rank's grid: the points other ranks'
/// halos read packed into one buffer, sent to each neighbouring rank, received into
/// another buffer and unpacked into the ghost blocks (see [`RankLayout::fill_ghosts`]).
///
/// On a device the pack, the messages (NCCL) and the unpack are queued without a wait on
/// the host: the launches after [`GhostExchange::run`] see the ghosts, and
/// [`GhostExchange::start`] and [`GhostExchange::finish`] let work on the blocks that
/// read no ghost run while they travel. On the CPU the messages go through MPI.
pub struct GhostExchange<T> {
    send: PointPack<T>,
    receive: PointPack<T>,
    /// Per neighbouring rank, its points of `send`.
    sends: Vec<(usize, Range<usize>)>,
    /// Per neighbouring rank, its points of `receive`.
    receives: Vec<(usize, Range<usize>)>,
    /// The ranks' communicator, for a grid on a device, and the stream of the grid's
    /// device that the messages and the unpack go on.
    nccl: Option<(Arc<Nccl>, Cuda)>,
    /// Whether a [`GhostExchange::start`] awaits its [`GhostExchange::finish`].
    started: bool,
}

impl<T> std::fmt::Debug for GhostExchange<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "GhostExchange {{ sends: {:?}, receives: {:?} }}",
            self.sends, self.receives
        )
    }
}

/// Blocks and elements of their slots.
type Points = Vec<(BlockKey, Vec<usize>)>;

/// The points of `lists` (per rank) in one list, and each rank's range of it.
fn concatenated(
    lists: impl Iterator<Item = (usize, Points)>,
) -> (Points, Vec<(usize, Range<usize>)>) {
    let (mut all, mut ranges) = (Vec::new(), Vec::new());
    let mut at = 0;
    for (rank, list) in lists {
        let n: usize = list.iter().map(|(_, e)| e.len()).sum();
        ranges.push((rank, at..at + n));
        at += n;
        all.extend(list);
    }
    (all, ranges)
}

impl RankLayout {
    /// The ghost fill of `fields` fields (1 to 8) of this rank's `grid`, planned for its
    /// present layout. Every rank must plan at the same point (on devices the first plan
    /// starts NCCL, a collective call); ranks on different kinds of backend are an
    /// error on every rank.
    pub fn ghost_exchange<T: Real>(
        &self,
        ranks: &Ranks,
        grid: &BlockGrid,
        fields: usize,
    ) -> Result<GhostExchange<T>, LayoutError> {
        let device = match grid.backend() {
            Backend::Cuda(c) => Some(c),
            Backend::Cpu => None,
        };
        if ranks.size() > 1 {
            let same = ranks.all(device.is_some()) || ranks.all(device.is_none());
            if !same {
                return Err(RanksError::MixedBackends.into());
            }
        }
        let (sent, sends) = concatenated(self.send_lists());
        let (received, receives) = concatenated(self.ghost_lists());
        let nccl = match device {
            Some(cuda) if ranks.size() > 1 => {
                // The messages' stream goes first for multiprocessors, so that its short
                // kernels (NCCL's, the unpack) need not wait for the blocks of the large
                // kernel the grid's stream runs meanwhile ([`HALO_PRIORITY_ENV`]).
                let side = match std::env::var(HALO_PRIORITY_ENV).as_deref() {
                    Ok("normal") => cuda.new_stream(),
                    _ => cuda.new_urgent_stream(),
                }
                .map_err(RanksError::device)?;
                Some((ranks.nccl(cuda)?, side))
            }
            _ => None,
        };
        Ok(GhostExchange {
            send: PointPack::new(grid, &sent, fields)?,
            receive: PointPack::new(grid, &received, fields)?,
            sends,
            receives,
            nccl,
            started: false,
        })
    }
}

impl<T: Real> GhostExchange<T> {
    /// Fills the ghost blocks of `fields` (as many as planned, on the planned layout of
    /// `grid`) from their owners, and sends the points of this rank's blocks that other
    /// ranks read. Every rank runs it at the same point.
    pub fn run(
        &mut self,
        ranks: &Ranks,
        grid: &BlockGrid,
        fields: &mut [&mut BlockField<T>],
    ) -> Result<(), LayoutError> {
        self.start(ranks, grid, fields)?;
        self.finish(grid)
    }

    /// Starts [`GhostExchange::run`]: on a device the pack of the points to send, the
    /// messages and the unpack into the ghost blocks are queued on a stream of their own
    /// ([`GhostExchange::side`]), after the work queued so far on the grid's stream, so
    /// that work queued on the grid's stream until [`GhostExchange::finish`] runs while
    /// the ghosts travel. That work must not touch the ghost blocks, nor write the points
    /// other ranks read ([`RankLayout::inner`] blocks and the first part of
    /// [`RankLayout::overlap_regions`] are safe to compute). On the CPU the whole fill
    /// happens here.
    pub fn start(
        &mut self,
        ranks: &Ranks,
        grid: &BlockGrid,
        fields: &mut [&mut BlockField<T>],
    ) -> Result<(), LayoutError> {
        if self.sends.is_empty() && self.receives.is_empty() {
            return Ok(());
        }
        let read: Vec<&BlockField<T>> = fields.iter().map(|f| &**f).collect();
        match (&self.nccl, grid.backend()) {
            (Some((nccl, side)), Backend::Cuda(main)) => {
                side.wait_for(main).map_err(RanksError::device)?;
                // Packed on the messages' stream too: the grid's stream goes on at once.
                self.send.pack_on(Some(side), grid, &read)?;
                nccl.exchange(
                    side,
                    &self.send,
                    &self.sends,
                    &mut self.receive,
                    &self.receives,
                )
                .map_err(RanksError::device)?;
                self.receive.unpack_on(Some(side), grid, fields)?;
                self.started = true;
            }
            _ => {
                self.send.pack(grid, &read)?;
                self.exchange_on_host(ranks)?;
                self.receive.unpack(grid, fields)?;
            }
        }
        Ok(())
    }

    /// The stream the messages travel on (devices of several ranks): work queued there
    /// after [`GhostExchange::start`] sees the ghosts and runs beside the work queued on
    /// the grid's stream meanwhile, until [`GhostExchange::finish`] makes the grid's
    /// stream wait for it. `None` where no messages travel on a stream of their own, or
    /// none were started (a rank that sends and receives nothing).
    pub fn side(&self) -> Option<&Cuda> {
        self.nccl
            .as_ref()
            .filter(|_| self.started)
            .map(|(_, side)| side)
    }

    /// Ends a [`GhostExchange::start`]: work queued on `grid`'s stream from now on sees
    /// the ghosts (no wait on the host).
    pub fn finish(&mut self, grid: &BlockGrid) -> Result<(), LayoutError> {
        if std::mem::take(&mut self.started) {
            if let (Some((_, side)), Backend::Cuda(main)) = (&self.nccl, grid.backend()) {
                main.wait_for(side).map_err(RanksError::device)?;
            }
        }
        Ok(())
    }

    /// The messages through [`Ranks::exchange`]: per neighbouring rank, its points of
    /// each field in turn.
    fn exchange_on_host(&mut self, ranks: &Ranks) -> Result<(), LayoutError> {
        let on_host = || {
            LayoutError::Runtime(stencil_runtime::Error::InvalidField(
                "a ghost exchange over MPI needs its buffers on the host".into(),
            ))
        };
        let send = self.send.host_values().ok_or_else(on_host)?;
        let n = self.send.count();
        let messages: Vec<(usize, Vec<f64>)> = self
            .sends
            .iter()
            .map(|(rank, r)| {
                let values = (0..self.send.fields())
                    .flat_map(|f| send[f * n + r.start..f * n + r.end].iter())
                    .map(|v| v.as_f64())
                    .collect();
                (*rank, values)
            })
            .collect();
        let fields = self.receive.fields();
        let expected: Vec<(usize, usize)> = self
            .receives
            .iter()
            .map(|(rank, r)| (*rank, r.len() * fields))
            .collect();
        let received = ranks.exchange(&messages, &expected)?;
        let n = self.receive.count();
        let buffer = self.receive.host_values_mut().ok_or_else(on_host)?;
        for ((_, r), message) in self.receives.iter().zip(received) {
            let mut values = message.into_iter();
            for f in 0..fields {
                for slot in &mut buffer[f * n + r.start..f * n + r.end] {
                    *slot = T::from_f64(values.next().ok_or(LayoutError::ShortMessage)?);
                }
            }
        }
        Ok(())
    }
}
