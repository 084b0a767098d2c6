//! The field groups of the KP07 kernels on the host: how a state stored as an array of
//! five fields and the fluxes stored as six become the groups the launchers take.

use super::scheme;

impl<F> scheme::StateFields<F> {
    /// The group the kernels take of a state stored as `[w, q, p, u, v]`: of `&Field`s
    /// from `state.each_ref()`, of `&mut BlockField`s from `state.each_mut()`, ...
    pub fn of([w, q, p, u, v]: [F; 5]) -> Self {
        Self { w, q, p, u, v }
    }
}

impl<F> scheme::Fluxes<F> {
    /// The group the kernels take of the face fluxes stored as the west faces' `[w, q,
    /// p]` then the south faces'.
    pub fn of([west_w, west_q, west_p, south_w, south_q, south_p]: [F; 6]) -> Self {
        Self {
            west_w,
            west_q,
            west_p,
            south_w,
            south_q,
            south_p,
        }
    }
}
