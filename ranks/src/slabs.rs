//! [`Slabs`]: a dense grid split along its last axis into slabs of consecutive planes,
//! one per rank in rank order, with the ghost planes at the cuts exchanged and the slabs
//! gathered into a whole grid on every rank; on the CPU over MPI, on devices over NCCL.
//!
//! A rank's part of a field is a field of its own: the whole extent along every axis but
//! the last, its slab's planes along the last, and the same halo. Kernels run on it as on
//! the whole grid, with the cut sides treated as sides whose ghost layer holds the
//! neighbours' values (as a periodic side's does after its wrap), which
//! [`Slabs::fill_cuts`] fills.

use crate::{Ranks, RanksError};
use std::ops::Range;
use std::sync::Arc;
use stencil_runtime::field::{PlaneExchange, PlaneFields};
use stencil_runtime::{Backend, Field, Real};

/// The planes `0..n` of a vertex-centred grid's last axis dealt to the ranks as slabs of
/// consecutive planes, balanced, each starting at a multiple of an alignment (so that
/// the slabs of coarser grids, halving the planes, stay aligned: see
/// [`Slabs::coarser`]).
#[derive(Clone, Debug)]
pub struct Slabs {
    ranks: Arc<Ranks>,
    /// Where each rank's slab starts, then `n`.
    starts: Vec<usize>,
}

impl Slabs {
    /// The `n` planes of a vertex-centred axis (`n - 1` intervals) dealt to `ranks`, each
    /// slab starting at a multiple of `align`. Too many ranks for the planes (a slab that
    /// would be empty) is [`RanksError::TooFewPlanes`].
    pub fn new(ranks: Arc<Ranks>, n: usize, align: usize) -> Result<Slabs, RanksError> {
        let starts = slab_starts(n, ranks.size(), align)?;
        Ok(Slabs { ranks, starts })
    }

    /// The same slabs on the next coarser vertex-centred grid (`(n + 1) / 2` planes: the
    /// even planes), where every slab starts at an even plane and stays non-empty.
    pub fn coarser(&self) -> Option<Slabs> {
        let size = self.ranks.size();
        let mut starts: Vec<usize> = self.starts[..size].iter().map(|s| s / 2).collect();
        starts.push(self.n().div_ceil(2));
        let aligned = self.starts[..size].iter().all(|s| s % 2 == 0);
        let nonempty = starts.windows(2).all(|w| w[0] < w[1]);
        (aligned && nonempty).then(|| Slabs {
            ranks: self.ranks.clone(),
            starts,
        })
    }

    /// The ranks.
    pub fn ranks(&self) -> &Arc<Ranks> {
        &self.ranks
    }

    /// Planes of the whole grid.
    pub fn n(&self) -> usize {
        self.starts[self.ranks.size()]
    }

    /// The planes of `rank`'s slab.
    pub fn planes(&self, rank: usize) -> Range<usize> {
        self.starts[rank]..self.starts[rank + 1]
    }

    /// The planes of this rank's slab.
    pub fn mine(&self) -> Range<usize> {
        self.planes(self.ranks.rank())
    }

    /// Whether this rank's slab has a neighbour below (`low`) or above.
    pub fn cut(&self, low: bool) -> bool {
        let r = self.ranks.rank();
        if low {
            r > 0
        } else {
            r + 1 < self.ranks.size()
        }
    }

    /// Fills the `depth` ghost planes at each cut of this rank's part `field` (a field
    /// whose last axis holds its slab, of this grid or of a coarser one: the neighbours
    /// are the same) with the neighbouring slabs' planes. On a device
    /// the messages are queued on `backend`'s stream without a wait on the host.
    pub fn fill_cuts<T: Real>(
        &self,
        backend: &Backend,
        field: &mut Field<T>,
        depth: usize,
    ) -> Result<(), RanksError> {
        if self.ranks.size() == 1 || depth == 0 {
            return Ok(());
        }
        // The field's own planes: the slabs of a coarser grid keep the ranks' neighbours.
        let m = field.extent()[field.dims() - 1] as isize;
        let (r, d) = (self.ranks.rank(), depth as isize);
        let (mut sends, mut receives) = (Vec::new(), Vec::new());
        if self.cut(true) {
            sends.push((r - 1, 0..d));
            receives.push((r - 1, -d..0));
        }
        if self.cut(false) {
            sends.push((r + 1, m - d..m));
            receives.push((r + 1, m..m + d));
        }
        let exchange = PlaneExchange {
            fields: PlaneFields::Within(field),
            sends: &sends,
            receives: &receives,
        };
        self.move_planes(backend, exchange)
    }

    /// Gives every rank the whole grid: planes `planes(r)` of each rank's `whole` take
    /// rank `r`'s `part` (its slab), its own copied, the others' received. On a device
    /// the messages are queued on `backend`'s stream without a wait on the host.
    pub fn all_gather<T: Real>(
        &self,
        backend: &Backend,
        part: &Field<T>,
        whole: &mut Field<T>,
    ) -> Result<(), RanksError> {
        let me = self.ranks.rank();
        let mine = signed(0..self.mine().len());
        let others = (0..self.ranks.size()).filter(|&r| r != me);
        let sends: Vec<_> = others.clone().map(|r| (r, mine.clone())).collect();
        let receives: Vec<_> = others.map(|r| (r, signed(self.planes(r)))).collect();
        let exchange = PlaneExchange {
            fields: PlaneFields::Between(part, whole),
            sends: &sends,
            receives: &receives,
        };
        self.move_planes(backend, exchange)?;
        whole
            .copy_planes(self.mine().start as isize, part, mine)
            .map_err(RanksError::device)
    }

    /// The fewest planes a rank's slab holds.
    pub fn fewest_planes(&self) -> usize {
        (0..self.ranks.size())
            .map(|r| self.planes(r).len())
            .min()
            .unwrap_or(0)
    }

    /// Sends planes and receives others: through NCCL on a device, through MPI on the
    /// CPU (values converted to f64 and back, exactly).
    fn move_planes<T: Real>(
        &self,
        backend: &Backend,
        exchange: PlaneExchange<'_, T>,
    ) -> Result<(), RanksError> {
        if let Backend::Cuda(cuda) = backend {
            let nccl = self.ranks.nccl(cuda)?;
            return nccl
                .exchange_planes(cuda, exchange)
                .map_err(RanksError::device);
        }
        let PlaneExchange {
            fields,
            sends,
            receives,
        } = exchange;
        let storage = |f: &Field<T>, planes: &Range<isize>| {
            f.plane_storage(planes.clone()).map_err(RanksError::device)
        };
        let (from, into) = fields.ends();
        let values = from.as_slice().map_err(RanksError::device)?;
        let mut out = Vec::with_capacity(sends.len());
        for (rank, planes) in sends {
            let at = storage(from, planes)?;
            out.push((*rank, values[at].iter().map(|v| v.as_f64()).collect()));
        }
        let places: Vec<(usize, Range<usize>)> = receives
            .iter()
            .map(|(rank, planes)| Ok((*rank, storage(into, planes)?)))
            .collect::<Result<_, RanksError>>()?;
        let wanted: Vec<(usize, usize)> = places.iter().map(|(r, at)| (*r, at.len())).collect();
        let received = self.ranks.exchange(&out, &wanted)?;
        let values = fields
            .into_receiver()
            .as_mut_slice()
            .map_err(RanksError::device)?;
        for ((_, at), got) in places.into_iter().zip(received) {
            for (v, x) in values[at].iter_mut().zip(got) {
                *v = T::from_f64(x);
            }
        }
        Ok(())
    }
}

/// A range of planes as the signed range fields take.
fn signed(r: Range<usize>) -> Range<isize> {
    r.start as isize..r.end as isize
}

/// Whether `part`, holding planes `start..` of a grid along its last axis, equals those
/// planes of `whole` (the grid on one rank) bit for bit; the first difference, in words,
/// otherwise. Both on the host or both readable there (device fields are copied).
pub fn first_difference<T: Real>(
    part: &Field<T>,
    whole: &Field<T>,
    start: usize,
) -> Option<String> {
    let (a, b) = match (part.interior(), whole.interior()) {
        (Ok(a), Ok(b)) => (a, b),
        (Err(e), _) | (_, Err(e)) => return Some(e.to_string()),
    };
    let last = part.dims() - 1;
    if part.dims() != whole.dims() || part.extent()[..last] != whole.extent()[..last] {
        return Some(format!(
            "a part of extent {:?} is not a slab of a grid of extent {:?}",
            part.extent(),
            whole.extent()
        ));
    }
    let plane: usize = part.extent()[..last].iter().product();
    let offset = start * plane;
    if offset + a.len() > b.len() {
        return Some(format!(
            "planes {start}.. of {} lie past the whole grid's",
            part.extent()[part.dims() - 1]
        ));
    }
    let k = (0..a.len()).find(|&k| a[k].as_f64().to_bits() != b[offset + k].as_f64().to_bits())?;
    Some(format!(
        "node {} of plane {} is {} split, {} whole",
        k % plane,
        start + k / plane,
        a[k],
        b[offset + k]
    ))
}

/// Where each of `size` slabs of the `n` planes of a vertex-centred axis starts, then
/// `n`: balanced by intervals, each start a multiple of `align`.
fn slab_starts(n: usize, size: usize, align: usize) -> Result<Vec<usize>, RanksError> {
    let align = align.max(1);
    let intervals = n.saturating_sub(1);
    let mut starts: Vec<usize> = (0..size)
        .map(|r| {
            let ideal = (r * intervals) as f64 / size as f64 / align as f64;
            ideal.round() as usize * align
        })
        .collect();
    starts.push(n);
    if n < 2 || starts.windows(2).any(|w| w[0] >= w[1]) {
        return Err(RanksError::TooFewPlanes { n, size, align });
    }
    Ok(starts)
}

#[cfg(test)]
#[allow(clippy::arc_with_non_send_sync)]
mod tests {
    use super::*;

    #[test]
    fn one_rank_holds_every_plane_and_coarsens_while_aligned() {
        let ranks = Arc::new(Ranks::single());
        let s = Slabs::new(ranks, 17, 4).unwrap();
        assert_eq!((s.mine(), s.n()), (0..17, 17));
        let c = s.coarser().unwrap();
        assert_eq!(c.mine(), 0..9);
        assert!(!s.cut(true) && !s.cut(false));
    }

    #[test]
    fn uneven_ranks_start_at_aligned_planes() {
        assert_eq!(slab_starts(8193, 3, 8).unwrap(), vec![0, 2728, 5464, 8193]);
        assert_eq!(slab_starts(8193, 2, 8).unwrap(), vec![0, 4096, 8193]);
        // 9 planes, 8 intervals: 4 ranks at multiples of 4 would leave some empty.
        let err = slab_starts(9, 4, 4).unwrap_err().to_string();
        assert!(err.contains("cannot give each of 4 ranks"), "{err}");
        assert!(Slabs::new(Arc::new(Ranks::single()), 1, 1).is_err());
    }
}
