//! `g.sample(x, y)` on the GPU: the bilinear interpolation of a sampled grid, in software
//! (four loads, the same operations in the same order as the CPU's
//! `stencil_runtime::cpu::SampledView::sample`) or through a texture object with hardware
//! filtering (one `tex.2d` fetch of `f32` samples).

use super::{Gen, R};
use crate::ir::{Binary, Ty, Unary};
use inkwell::values::{BasicValueEnum, FunctionValue, IntValue};
use inkwell::IntPredicate;

/// How a kernel's PTX reads its sampled grids.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Sampling {
    /// Four loads from global memory and a bilinear interpolation in the kernel's arithmetic.
    Software,
    /// One fetch through a texture object with hardware linear filtering: `f32` samples,
    /// interpolation weights with 8 fractional bits.
    Texture,
}

/// Launch parameters of one sampled grid inside an entry: the samples' address (software)
/// or the texture object (texture), the extents, the origin and the inverse spacing.
pub(super) struct SampledArgs<'ctx> {
    pub handle: IntValue<'ctx>,
    pub n: [IntValue<'ctx>; 2],
    pub origin: [BasicValueEnum<'ctx>; 2],
    pub inverse_spacing: [BasicValueEnum<'ctx>; 2],
}

/// The number of entry parameters a sampled grid takes.
pub(super) const SAMPLED_PARAMS: u32 = 7;

/// The name of the NVVM intrinsic for a bindless 2D texture fetch with `f32` coordinates.
const TEX_2D: &str = "llvm.nvvm.tex.unified.2d.v4f32.f32";

impl<'ctx> Gen<'_, 'ctx> {
    /// Grid `g` (elements of type `ty`) interpolated at `(x, y)`.
    pub(super) fn sample(
        &self,
        g: &SampledArgs<'ctx>,
        x: BasicValueEnum<'ctx>,
        y: BasicValueEnum<'ctx>,
        ty: Ty,
    ) -> R<BasicValueEnum<'ctx>> {
        let at = [
            self.clamped_coordinate(g, 0, x, ty)?,
            self.clamped_coordinate(g, 1, y, ty)?,
        ];
        match self.sampling {
            Sampling::Texture => self.texture_fetch(g.handle, at, ty),
            Sampling::Software => {
                let [u, v] = at;
                let (i, fx) = self.cell(u, g.n[0], ty)?;
                let (j, fy) = self.cell(v, g.n[1], ty)?;
                let ptr_ty = self.elem_ptr_type(ty);
                let base = self.b.build_int_to_ptr(g.handle, ptr_ty, "")?;
                let b = &self.b;
                let row = b.build_int_nsw_mul(j, g.n[0], "")?;
                let at = |di: i64, dj: i64| -> R<BasicValueEnum<'ctx>> {
                    let mut k = b.build_int_nsw_add(row, i, "")?;
                    if dj == 1 {
                        k = b.build_int_nsw_add(k, g.n[0], "")?;
                    }
                    if di == 1 {
                        k = b.build_int_nsw_add(k, self.i64c(1), "")?;
                    }
                    // SAFETY of the GEP: `i <= nx - 2` and `j <= ny - 2` by construction,
                    // and the run time checked that the grid holds `nx * ny` samples.
                    let p = unsafe { b.build_in_bounds_gep(base, &[k], "")? };
                    self.load(p, ty)
                };
                let (a, c) = (at(0, 0)?, at(1, 0)?);
                let (d, e) = (at(0, 1)?, at(1, 1)?);
                let low = self.lerp(a, c, fx, ty)?;
                let high = self.lerp(d, e, fx, ty)?;
                self.lerp(low, high, fy, ty)
            }
        }
    }

    /// `min(max((x - origin) * inverse_spacing, 0), n - 1)` along axis `axis` of grid `g`:
    /// the position in samples along that axis, clamped to the grid.
    fn clamped_coordinate(
        &self,
        g: &SampledArgs<'ctx>,
        axis: usize,
        x: BasicValueEnum<'ctx>,
        ty: Ty,
    ) -> R<BasicValueEnum<'ctx>> {
        let d = self.binary(Binary::Sub, x, g.origin[axis], ty)?;
        let u = self.binary(Binary::Mul, d, g.inverse_spacing[axis], ty)?;
        let u = self.binary(Binary::Max, u, self.real_const(ty, 0.0), ty)?;
        let last = self.b.build_int_nsw_sub(g.n[axis], self.i64c(1), "")?;
        let last = self.cast(last.into(), Ty::Int, ty)?;
        self.binary(Binary::Min, u, last, ty)
    }

    /// The cell `i = min(floor(u), n - 2)` holding clamped coordinate `u`, and `u - i`.
    fn cell(
        &self,
        u: BasicValueEnum<'ctx>,
        n: IntValue<'ctx>,
        ty: Ty,
    ) -> R<(IntValue<'ctx>, BasicValueEnum<'ctx>)> {
        let fl = self.unary(Unary::Floor, u, ty)?;
        let i = self.cast(fl, ty, Ty::Int)?.into_int_value();
        let top = self.b.build_int_nsw_sub(n, self.i64c(2), "")?;
        let below = self.b.build_int_compare(IntPredicate::SLT, i, top, "")?;
        let i = self.b.build_select(below, i, top, "")?.into_int_value();
        let fi = self.cast(i.into(), Ty::Int, ty)?;
        Ok((i, self.binary(Binary::Sub, u, fi, ty)?))
    }

    /// `a + t * (b - a)`.
    fn lerp(
        &self,
        a: BasicValueEnum<'ctx>,
        b: BasicValueEnum<'ctx>,
        t: BasicValueEnum<'ctx>,
        ty: Ty,
    ) -> R<BasicValueEnum<'ctx>> {
        let d = self.binary(Binary::Sub, b, a, ty)?;
        let s = self.binary(Binary::Mul, t, d, ty)?;
        self.binary(Binary::Add, a, s, ty)
    }

    /// The texture object `handle` fetched at sample coordinates `[u, v]` (texel centres
    /// lie at half-integers, hence the `+ 0.5`), converted to `ty`.
    fn texture_fetch(
        &self,
        handle: IntValue<'ctx>,
        [u, v]: [BasicValueEnum<'ctx>; 2],
        ty: Ty,
    ) -> R<BasicValueEnum<'ctx>> {
        let half = self.real_const(Ty::F32, 0.5);
        let tu = self.cast(u, ty, Ty::F32)?;
        let tv = self.cast(v, ty, Ty::F32)?;
        let tu = self.binary(Binary::Add, tu, half, Ty::F32)?;
        let tv = self.binary(Binary::Add, tv, half, Ty::F32)?;
        let fetch = self.tex_2d()?;
        let texel = self
            .call(fetch, &[handle.into(), tu, tv])?
            .into_struct_value();
        let red = self.b.build_extract_value(texel, 0, "")?;
        self.cast(red, Ty::F32, ty)
    }

    /// The declaration of [`TEX_2D`]: `{f32, f32, f32, f32} (i64 texture, f32 x, f32 y)`.
    fn tex_2d(&self) -> R<FunctionValue<'ctx>> {
        if let Some(f) = self.module.get_function(TEX_2D) {
            return Ok(f);
        }
        let f32t = self.ctx.f32_type();
        let ret = self
            .ctx
            .struct_type(&[f32t.into(), f32t.into(), f32t.into(), f32t.into()], false);
        let fn_ty = ret.fn_type(
            &[self.ctx.i64_type().into(), f32t.into(), f32t.into()],
            false,
        );
        Ok(self.module.add_function(TEX_2D, fn_ty, None))
    }
}
