//! Launches over the blocks of a block grid (`stencil_runtime::blocks`): where a thread
//! block's tile lies.
//!
//! A point kernel's entry ends with two parameters: a pointer to one
//! record of four `i64` per listed block (the global index of the block's first point
//! along x, y, z, and the element offset of its slot from the fields' pointers), null for a
//! dense launch, and the number of tiles along z per block. A launch over `B` blocks has
//! `tiles_z * B` thread blocks along z: thread block z-index `c` computes tile
//! `c % tiles_z` of listed block `c / tiles_z`. A dense launch passes `u32::MAX` tiles, so
//! that the same arithmetic gives block 0 and tile `c`, and a zero origin and shift.

use super::{Gen, R};
use inkwell::values::{FunctionValue, IntValue};

/// Where a thread block's tile lies.
pub(super) struct BlockPlace<'ctx> {
    /// The tile's index along z within its block (`ctaid.z` for a dense launch).
    pub tile_z: IntValue<'ctx>,
    /// The global index of the block's first point (0 for a dense launch).
    pub origin: [IntValue<'ctx>; 3],
    /// The element offset of the block's slot from the fields' pointers (0 for dense).
    pub shift: IntValue<'ctx>,
}

impl<'ctx> Gen<'_, 'ctx> {
    /// The parameter types of the block list.
    pub(super) fn block_param_types(&self) -> [inkwell::types::BasicMetadataTypeEnum<'ctx>; 2] {
        let i64t = self.ctx.i64_type();
        [i64t.ptr_type(self.addr_space()).into(), i64t.into()]
    }

    /// Reads the block list's record for this thread block (the last two parameters of
    /// `f`: the records' address and the tiles along z), from the entry block.
    pub(super) fn block_place(&self, f: FunctionValue<'ctx>) -> R<BlockPlace<'ctx>> {
        let count = f.count_params();
        let param = |k: u32| f.get_nth_param(k).expect("the block list parameters");
        let records = param(count - 2).into_pointer_value();
        let tiles_z = param(count - 1).into_int_value();
        let (i32t, i64t) = (self.ctx.i32_type(), self.ctx.i64_type());
        let tiles_z = self.b.build_int_truncate(tiles_z, i32t, "")?;
        let cz = self.sreg("ctaid.z")?;
        let block = self.b.build_int_unsigned_div(cz, tiles_z, "")?;
        let tile_z = self.b.build_int_unsigned_rem(cz, tiles_z, "")?;

        let start = self.b.get_insert_block().expect("positioned in the entry");
        let read = self.ctx.append_basic_block(f, "block_record");
        let done = self.ctx.append_basic_block(f, "block_record_done");
        let dense = self.b.build_is_null(records, "")?;
        self.b.build_conditional_branch(dense, done, read)?;

        self.b.position_at_end(read);
        let first = self.b.build_int_nuw_mul(
            self.b.build_int_z_extend(block, i64t, "")?,
            self.i64c(4),
            "",
        )?;
        let mut fields = Vec::with_capacity(4);
        for k in 0..4 {
            let at = self.b.build_int_nuw_add(first, self.i64c(k), "")?;
            // SAFETY (of the generated code): the run time passes one record per listed
            // block and launches `tiles_z` thread blocks along z per record.
            let ptr = unsafe { self.b.build_in_bounds_gep(records, &[at], "")? };
            // Through the non-coherent path, as every read-only load.
            let ldg = self.intrinsic(
                "llvm.nvvm.ldg.global.i",
                &[i64t.into(), ptr.get_type().into()],
            )?;
            let align = self.ctx.i32_type().const_int(8, false);
            fields.push(
                self.call(ldg, &[ptr.into(), align.into()])?
                    .into_int_value(),
            );
        }
        let read_end = self.b.get_insert_block().expect("positioned in the read");
        self.b.build_unconditional_branch(done)?;

        self.b.position_at_end(done);
        let zero = self.i64c(0);
        let merged: Vec<IntValue<'ctx>> = fields
            .iter()
            .map(|v| {
                let phi = self.b.build_phi(i64t, "")?;
                phi.add_incoming(&[(&zero, start), (v, read_end)]);
                Ok(phi.as_basic_value().into_int_value())
            })
            .collect::<R<_>>()?;
        Ok(BlockPlace {
            tile_z,
            origin: [merged[0], merged[1], merged[2]],
            shift: merged[3],
        })
    }
}
