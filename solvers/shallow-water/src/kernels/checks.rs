//! The kernels that look at the state: its survey, how far cells are from dry, the live
//! view's picture and the flood's extent.

use stencil_runtime::prelude::*;

/// The kernels (see [`super`] for the grid and the state).
#[stencils(helpers = [super::scheme])]
pub mod kernels {
    /// What a check of the state needs: the water volume per unit cell area (in `f64`),
    /// the smallest depth, the largest depth and the largest speed `|u| + |v|` (where the
    /// depth exceeds `dry`). A NaN anywhere makes the volume NaN.
    #[stencil]
    pub fn survey<T: Real>(
        w: In<T>,
        q: In<T>,
        p: In<T>,
        bed: In<T>,
        volume: Sum<f64>,
        shallowest: Min<T>,
        deepest: Max<T>,
        fastest: Max<T>,
        dry: T,
    ) {
        let h = w - cell_bed(bed, bed[(1, 0)], bed[(0, 1)], bed[(1, 1)]);
        volume.reduce(h as f64 + 0.0 * ((q + p) as f64));
        shallowest.reduce(h);
        deepest.reduce(h);
        let s = (q.abs() + p.abs()) / h;
        if h > dry {
            fastest.reduce(s);
        }
    }

    /// How far each cell is from the dry state (the surface at the bed, no discharge):
    /// zero exactly where it is dry (NaN stays NaN). A sparse run's regridding keeps the
    /// blocks where it is not zero. Also counts the wet cells (depth above zero).
    #[stencil]
    pub fn activity<T: Real>(
        w: In<T>,
        q: In<T>,
        p: In<T>,
        bed: In<T>,
        away: Out<T>,
        wet_cells: Sum<f64>,
    ) {
        let h = w - cell_bed(bed, bed[(1, 0)], bed[(0, 1)], bed[(1, 1)]);
        away = h.abs() + q.abs() + p.abs();
        if h > 0.0 {
            wet_cells.reduce(1.0);
        }
    }

    /// What the live view shows of a cell: its depth (zero where dry) and its speed (zero
    /// where the depth is `dry` or less).
    #[stencil]
    pub fn picture<T: Real>(
        w: In<T>,
        q: In<T>,
        p: In<T>,
        bed: In<T>,
        depth: Out<T>,
        speed: Out<T>,
        dry: T,
    ) {
        let h = w - cell_bed(bed, bed[(1, 0)], bed[(0, 1)], bed[(1, 1)]);
        depth = h.max(0.0);
        speed = if h > dry {
            (q * q + p * p).sqrt() / h
        } else {
            0.0
        };
    }

    /// Records the flood's extent: the largest depth so far (`deepest`) and the time at
    /// which the depth first exceeded `wet` (`arrival`, negative until then).
    #[stencil]
    pub fn track<T: Real>(
        w: In<T>,
        bed: In<T>,
        deepest: InOut<T>,
        arrival: InOut<T>,
        time: Value<T>,
        wet: T,
    ) {
        let h = w - cell_bed(bed, bed[(1, 0)], bed[(0, 1)], bed[(1, 1)]);
        deepest = deepest.max(h);
        arrival = if arrival < 0.0 && h > wet {
            time
        } else {
            arrival
        };
    }
}
