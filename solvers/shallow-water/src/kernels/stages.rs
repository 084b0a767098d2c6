//! The kernels that step the state: the velocities of a state set from outside, the face
//! fluxes and the update of two passes per stage, the stage in one pass and its CFL pass,
//! and the rates and their update of a stage split the way the "compact stencils" codes
//! split it.

use stencil_runtime::prelude::*;

/// The kernels (see [`super`] for the grid, the state and the sides).
#[stencils(helpers = [super::scheme, super::update::update])]
pub mod kernels {
    use super::super::scheme::{Fluxes, Kp07, StateFields};

    /// The desingularised velocities `u = q / h` and `v = p / h` of a state (KP07 2.17),
    /// which the face fluxes reconstruct: [`advance`] writes them with every new state;
    /// this kernel gives them for a state set from outside (the start, a restored
    /// checkpoint).
    #[stencil]
    pub fn velocities<T: Real>(
        w: In<T>,
        q: In<T>,
        p: In<T>,
        bed: In<T>,
        u: Out<T>,
        v: Out<T>,
        eps: T,
    ) {
        let base = cell_bed(bed, bed[(1, 0)], bed[(0, 1)], bed[(1, 1)]);
        u = cell_velocity(w, base, q, eps);
        v = cell_velocity(w, base, p, eps);
    }

    /// The central-upwind fluxes (KP07 3.7) through each cell's west and south faces,
    /// each face computed once, and the largest `a / dx` over them (the CFL time step is
    /// `C` over its maximum: a reduction fused into this pass). A face's two states are
    /// reconstructed from the four cells around it: the surface with the limited slopes
    /// and the positivity correction (KP07 2.14), the velocities `u`, `v` (those of
    /// [`velocities`]) with limited slopes, and the face discharges are the face depths
    /// times the face velocities (as Kurganov recommends in his 2018 review, Acta
    /// Numerica 27). Reconstructing the discharges instead lets a deep neighbour's
    /// discharge meet a nearly dry face: velocities of thousands of m/s at wet-dry fronts
    /// and time steps a thousand times too short (measured on Malpasset).
    ///
    /// `west_q` and `south_p` are the fluxes of the discharge normal to the face, the
    /// others of the tangential one. The east face of the last column and the north face
    /// of the last row belong to no cell: on a periodic side they are the first
    /// column's and row's (the caller wraps the flux fields), on any other [`advance`]
    /// computes them, and their speeds are counted here.
    #[stencil]
    pub fn faces<T: Real>(
        state: In<StateFields<T>>,
        bed: In<T>,
        faces: Out<Fluxes<T>>,
        speed: Max<T>,
        s: Kp07<T>,
    ) {
        let (fw, fq, fp, west_a, east_a) = west_face(state.w, state.u, state.v, bed, s);
        faces.west_w = fw;
        faces.west_q = fq;
        faces.west_p = fp;
        let (fw, fp, fq, south_a, north_a) = south_face(state.w, state.u, state.v, bed, s);
        faces.south_w = fw;
        faces.south_p = fp;
        faces.south_q = fq;
        speed.reduce((west_a.max(east_a) * s.dx_inv).max(south_a.max(north_a) * s.dy_inv));
    }

    /// One Runge-Kutta stage from the face fluxes of [`faces`] ([`rk_update`]), the new
    /// state's velocities written for the next [`faces`] (`from`'s velocities are not
    /// read).
    #[stencil]
    pub fn advance<T: Real>(
        from: In<StateFields<T>>,
        bed: In<T>,
        faces: In<Fluxes<T>>,
        to: InOut<StateFields<T>>,
        dt: Value<T>,
        keep: T,
        s: Kp07<T>,
    ) {
        (to.w, to.q, to.p, to.u, to.v) = rk_update(from, bed, faces, to, dt, keep, s);
    }

    /// One Runge-Kutta stage in one pass: the west and south face fluxes of [`faces`]
    /// staged (each face computed once over a thread block's tile and its halo, and kept
    /// on chip) and the update of [`advance`] from them, bit for bit what `faces` then
    /// `advance` give. Not for a periodic side, whose fluxes are wrapped between the
    /// passes. No CFL maximum: the time step comes before the stage
    /// ([`face_speeds`]).
    #[stencil]
    pub fn stage_in_one<T: Real>(
        from: In<StateFields<T>>,
        bed: In<T>,
        to: InOut<StateFields<T>>,
        dt: Value<T>,
        keep: T,
        s: Kp07<T>,
    ) {
        let (ww, wq, wp, _, _) = stage(west_face(from.w, from.u, from.v, bed, s));
        let (sw, sp, sq, _, _) = stage(south_face(from.w, from.u, from.v, bed, s));
        // The update reads the staged faces as `advance` reads the flux fields.
        let own = own_surfaces(from, bed, s);
        let (rate_w, rate_q, rate_p) = staged_rates(from, bed, ww, wq, wp, sw, sq, sp, own, s);
        (to.w, to.q, to.p, to.u, to.v) =
            rk_apply(from, bed, rate_w, rate_q, rate_p, to, dt, keep, s);
    }

    /// The rates of a Runge-Kutta stage from values staged on chip, as the hand-written
    /// "compact stencils" shallow-water kernels compute them: each cell reconstructed
    /// once (its sides along x and along y staged: [`x_sides`], [`y_sides`]), each west
    /// and south face's fluxes staged from the sides of the cells either side of it, each
    /// cell's rates `R` of KP07 3.6 written from the faces and its own sides
    /// ([`rk_rates`]), and the largest `a / dx` over the faces reduced as [`faces`]
    /// reduces it (the time step, which the rates do not need). [`apply_rates`] then
    /// takes the stage: the same bits as [`faces`] then [`advance`], three values written
    /// per cell instead of six fluxes. On the GPU two levels of stages (a chain: the
    /// faces read the cells' sides) with a barrier after each. Not for a periodic side.
    #[stencil]
    pub fn rates<T: Real>(
        from: In<StateFields<T>>,
        bed: In<T>,
        rate_w: Out<T>,
        rate_q: Out<T>,
        rate_p: Out<T>,
        speed: Max<T>,
        s: Kp07<T>,
    ) {
        let (xlw, xln, xlt, xhw, xhn, xht) = stage(x_sides(from, bed, s));
        let (ylw, yln, ylt, yhw, yhn, yht) = stage(y_sides(from, bed, s));
        let (ww, wq, wp, wa) = stage(face_of_staged_sides(
            xlw, xln, xlt, xhw, xhn, xht, from, bed, 0, s,
        ));
        let (sw, sp, sq, sa) = stage(face_of_staged_sides(
            ylw, yln, ylt, yhw, yhn, yht, from, bed, 1, s,
        ));
        let own = (xlw, xhw, ylw, yhw);
        (rate_w, rate_q, rate_p) = staged_rates(from, bed, ww, wq, wp, sw, sq, sp, own, s);
        speed.reduce((wa * s.dx_inv).max(sa * s.dy_inv));
    }

    /// One Runge-Kutta stage from the rates of [`rates`] ([`rk_apply`]), the new state's
    /// velocities written for the next stage (`from`'s velocities are not read).
    #[stencil]
    pub fn apply_rates<T: Real>(
        from: In<StateFields<T>>,
        bed: In<T>,
        rate_w: In<T>,
        rate_q: In<T>,
        rate_p: In<T>,
        to: InOut<StateFields<T>>,
        dt: Value<T>,
        keep: T,
        s: Kp07<T>,
    ) {
        (to.w, to.q, to.p, to.u, to.v) =
            rk_apply(from, bed, rate_w, rate_q, rate_p, to, dt, keep, s);
    }

    /// The largest `a / dx` over the faces, as [`faces`] reduces it, without the fluxes:
    /// the CFL time step of a stage in one pass ([`stage_in_one`]).
    #[stencil]
    pub fn face_speeds<T: Real>(state: In<StateFields<T>>, bed: In<T>, speed: Max<T>, s: Kp07<T>) {
        let (_, _, _, west_a, east_a) = west_face(state.w, state.u, state.v, bed, s);
        let (_, _, _, south_a, north_a) = south_face(state.w, state.u, state.v, bed, s);
        speed.reduce((west_a.max(east_a) * s.dx_inv).max(south_a.max(north_a) * s.dy_inv));
    }
}
