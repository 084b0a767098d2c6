//! A PTX entry's parameters: their types in calling-convention order, pointer
//! attributes, and reading them back inside the entry; declaring the entry itself.

use super::*;

impl<'a, 'ctx> Gen<'a, 'ctx> {
    /// The parameter types of the PTX entry, in calling-convention order.
    pub(super) fn entry_param_types(&self) -> Vec<BasicMetadataTypeEnum<'ctx>> {
        let i64t = self.ctx.i64_type();
        let mut ps: Vec<BasicMetadataTypeEnum> = vec![i64t.into(); 3];
        for &(kind, i) in &self.k.param_order {
            match kind {
                ParamKind::Field => {
                    ps.push(self.elem_ptr_type(self.k.fields[i as usize].elem).into());
                    ps.push(i64t.into());
                    ps.push(i64t.into());
                }
                ParamKind::Scalar if self.k.scalars[i as usize].held => {
                    ps.push(self.elem_ptr_type(self.k.scalars[i as usize].ty).into());
                }
                ParamKind::Scalar => {
                    let t = self.k.scalars[i as usize].ty;
                    ps.push(if t == Ty::Bool {
                        self.ctx.i32_type().into()
                    } else {
                        self.ty(t).into()
                    });
                }
                ParamKind::Reduction => {
                    ps.push(self.elem_ptr_type(self.k.reductions[i as usize].ty).into());
                }
                ParamKind::Mesh => {
                    let table = self.ctx.i32_type().ptr_type(self.addr_space());
                    ps.extend((0..MESH_TABLES).map(|_| BasicMetadataTypeEnum::from(table)));
                }
                ParamKind::Sampled => {
                    // The samples' address or the texture object, the extents, the origin
                    // and the inverse spacing.
                    let elem = self.ty(self.k.sampled[i as usize].elem);
                    ps.extend((0..3).map(|_| BasicMetadataTypeEnum::from(i64t)));
                    ps.extend((0..4).map(|_| BasicMetadataTypeEnum::from(elem)));
                }
            }
        }
        if self.k.is_vertex() {
            // A vertex kernel has no block list: its threads are the set's vertices.
        } else if let Some(line) = &self.k.line {
            ps.push(
                self.elem_ptr_type(self.k.fields[line.field as usize].elem)
                    .into(),
            );
        } else {
            // The block list (`blocks.rs`).
            ps.extend(self.block_param_types());
        }
        ps
    }

    /// Marks pointer parameters `noalias`, and inputs `readonly`.
    pub(super) fn pointer_attributes(&self, f: FunctionValue<'ctx>, first_param: u32) {
        let noalias = self
            .ctx
            .create_enum_attribute(Attribute::get_named_enum_kind_id("noalias"), 0);
        let readonly = self
            .ctx
            .create_enum_attribute(Attribute::get_named_enum_kind_id("readonly"), 0);
        let mut pos = first_param;
        for &(kind, i) in &self.k.param_order {
            match kind {
                ParamKind::Field => {
                    f.add_attribute(AttributeLoc::Param(pos), noalias);
                    if self.k.fields[i as usize].access == Access::In {
                        f.add_attribute(AttributeLoc::Param(pos), readonly);
                    }
                    pos += 3;
                }
                ParamKind::Scalar => {
                    // A held value is only read during the launch (the borrow checker keeps
                    // its field from being an output at the same time).
                    if self.k.scalars[i as usize].held {
                        f.add_attribute(AttributeLoc::Param(pos), noalias);
                        f.add_attribute(AttributeLoc::Param(pos), readonly);
                    }
                    pos += 1;
                }
                ParamKind::Reduction => {
                    f.add_attribute(AttributeLoc::Param(pos), noalias);
                    pos += 1;
                }
                ParamKind::Mesh => {
                    for t in pos..pos + MESH_TABLES {
                        f.add_attribute(AttributeLoc::Param(t), readonly);
                    }
                    pos += MESH_TABLES;
                }
                ParamKind::Sampled => pos += SAMPLED_PARAMS,
            }
        }
    }

    /// A row or plane stride as the entry uses it: the run time passes strides below
    /// 2^32 elements (it refuses larger ones), so index products are 32 x 32 -> 64-bit
    /// multiplies (one instruction on a GPU instead of three).
    pub(super) fn narrow_stride(&self, v: IntValue<'ctx>) -> R<IntValue<'ctx>> {
        let narrow = self.b.build_int_truncate(v, self.ctx.i32_type(), "")?;
        Ok(self.b.build_int_z_extend(narrow, self.ctx.i64_type(), "")?)
    }

    /// Reads the parameters of the PTX entry into [`EntryArgs`].
    pub(super) fn unpack_params(&self, f: FunctionValue<'ctx>) -> R<EntryArgs<'ctx>> {
        let p = |i: u32| f.get_nth_param(i).expect("declared parameter");
        let mut args = EntryArgs::new([0, 1, 2].map(|i| p(i).into_int_value()));
        let mut pos = 3;
        for &(kind, i) in &self.k.param_order {
            match kind {
                ParamKind::Field => {
                    let field = &self.k.fields[i as usize];
                    args.fields.push(FieldArgs {
                        ptr: p(pos).into_pointer_value(),
                        sy: self.narrow_stride(p(pos + 1).into_int_value())?,
                        sz: self.narrow_stride(p(pos + 2).into_int_value())?,
                        map: field.map,
                        written: field.access.is_written(),
                    });
                    pos += 3;
                }
                ParamKind::Scalar => {
                    let v = p(pos);
                    let v = if self.k.scalars[i as usize].held {
                        // Read after the grid dependency point: the launch before may
                        // have written it.
                        self.b.build_load(v.into_pointer_value(), "held")?
                    } else if self.k.scalars[i as usize].ty == Ty::Bool {
                        let zero = self.ctx.i32_type().const_zero();
                        self.b
                            .build_int_compare(IntPredicate::NE, v.into_int_value(), zero, "")?
                            .into()
                    } else {
                        v
                    };
                    args.scalars.push(v);
                    pos += 1;
                }
                ParamKind::Reduction => {
                    args.reductions.push(p(pos).into_pointer_value());
                    pos += 1;
                }
                ParamKind::Mesh => {
                    let t = |k: u32| p(pos + k).into_pointer_value();
                    args.mesh = Some(MeshArgs {
                        set: t(0),
                        neighbour_start: t(1),
                        neighbours: t(2),
                        triangle_start: t(3),
                        corners: t(4),
                    });
                    pos += MESH_TABLES;
                }
                ParamKind::Sampled => {
                    args.sampled.push(SampledArgs {
                        handle: p(pos).into_int_value(),
                        n: [p(pos + 1).into_int_value(), p(pos + 2).into_int_value()],
                        origin: [p(pos + 3), p(pos + 4)],
                        inverse_spacing: [p(pos + 5), p(pos + 6)],
                    });
                    pos += SAMPLED_PARAMS;
                }
            }
        }
        if self.k.line.is_some() {
            args.scratch = Some(p(pos).into_pointer_value());
        }
        Ok(args)
    }

    /// Declares the PTX entry `name`, positions the builder in its entry block and emits
    /// the grid dependency point ([`crate::llvm::GRID_DEPENDENCY_POINT`]) as its first instruction:
    /// nothing the kernel reads or writes in memory may move above it.
    ///
    /// A staged kernel's entry has no dependency point: it starts when the kernel before
    /// it has finished, and the kernel after it when it has. With programmatic dependent
    /// launches, the shallow-water one-pass stage between the clock's `tick` and the next
    /// step's `face_speeds` gave other states (an H100; not with either launch
    /// serialised, and not in chains of staged kernels alone): not yet understood, so
    /// staged kernels are not launched that way.
    pub(super) fn begin_kernel(&mut self, name: &str) -> R<FunctionValue<'ctx>> {
        let f = self.declare_kernel(name)?;
        let entry = self.ctx.append_basic_block(f, "entry");
        self.b.position_at_end(entry);
        if self.k.is_staged() {
            return Ok(f);
        }
        let asm = self.ctx.create_inline_asm(
            self.ctx.void_type().fn_type(&[], false),
            crate::llvm::GRID_DEPENDENCY_POINT.to_string(),
            "~{memory}".to_string(),
            true,
            false,
            None,
            false,
        );
        let callable = CallableValue::try_from(asm).map_err(|()| LlvmError::Invalid {
            kernel: self.k.name.clone(),
            message: "inline assembly is not callable".into(),
        })?;
        self.b.build_call(callable, &[], "")?;
        Ok(f)
    }

    /// Declares a CUDA kernel entry `name` with the kernel's parameters, marked as a
    /// kernel in `nvvm.annotations`.
    pub(super) fn declare_kernel(&self, name: &str) -> R<FunctionValue<'ctx>> {
        let fn_ty = self
            .ctx
            .void_type()
            .fn_type(&self.entry_param_types(), false);
        let f = self.module.add_function(name, fn_ty, None);
        self.pointer_attributes(f, 3);
        let kernel_md = self.ctx.metadata_node(&[
            f.as_global_value().as_pointer_value().into(),
            self.ctx.metadata_string("kernel").into(),
            self.ctx.i32_type().const_int(1, false).into(),
        ]);
        self.module
            .add_global_metadata("nvvm.annotations", &kernel_md)
            .map_err(|e| LlvmError::Invalid {
                kernel: name.to_string(),
                message: e.to_string(),
            })?;
        Ok(f)
    }
}
