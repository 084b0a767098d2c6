//! A kernel's parameters: fields, reductions, scalars, `Axes`, sampled grids and the mesh
//! declared in the order the launcher takes them, and the types they name.

use super::*;

/// The parameter type of a real held on the backend, `dt: Value<T>`: the launcher takes a
/// `stencil_runtime::Value`, which an earlier launch may have written on the device.
pub(super) const HELD_TYPE: &str = "Value";

impl Lowerer<'_> {
    pub(super) fn declare_params(&mut self, f: &FnDef) -> Result<()> {
        for p in &f.params {
            let name = &p.name.name;
            if self.scopes[0].contains_key(name) {
                return err(
                    p.name.span,
                    format!("parameter `{name}` is declared twice"),
                    Some("rename one of them"),
                );
            }
            let binding = match &p.ty {
                ast::TypeExpr::Apply { head, args, span } => {
                    let elem = match args.as_slice() {
                        [a] => self.resolve_element(a)?,
                        _ => {
                            return err(
                                *span,
                                format!("`{}` takes one type argument", head.name),
                                Some("write e.g. `In<T>`"),
                            )
                        }
                    };
                    match head.name.as_str() {
                        "In" | "Out" | "InOut" | "Fine" | "Coarse" => {
                            if elem == Ty::Int {
                                return err(
                                    args[0].span(),
                                    format!(
                                        "fields hold reals, `i32`, `u8` or `bool`, not `{elem}`"
                                    ),
                                    Some(
                                        "use `i32` (read and written as `i64` values) for integers",
                                    ),
                                );
                            }
                            let (access, map) = match head.name.as_str() {
                                "In" => (Access::In, IndexMap::Same),
                                "Out" => (Access::Out, IndexMap::Same),
                                "InOut" => (Access::InOut, IndexMap::Same),
                                "Fine" => (Access::In, IndexMap::Fine),
                                _ => (Access::In, IndexMap::Coarse),
                            };
                            let idx = self.fields.len() as u32;
                            self.fields.push(FieldParam {
                                name: name.clone(),
                                access,
                                elem,
                                reach_lo: [0; 3],
                                reach_hi: [0; 3],
                                map,
                                member_of: p.member_of.clone(),
                            });
                            self.field_spans.push(p.name.span);
                            match access {
                                Access::Out => {
                                    self.state.outputs.insert(idx, OutState::Unwritten);
                                }
                                // An in-place field keeps its value where it is not assigned.
                                Access::InOut => {
                                    let old = self.b.add(
                                        Node::Load {
                                            field: idx,
                                            offset: [0; 3],
                                        },
                                        elem.value(),
                                    );
                                    self.state.outputs.insert(idx, OutState::Written(old));
                                }
                                Access::In => {}
                            }
                            self.param_order.push((ParamKind::Field, idx));
                            Binding::Field(idx)
                        }
                        "Sum" | "Max" | "Min" => {
                            let op = match head.name.as_str() {
                                "Sum" => ReduceOp::Sum,
                                "Max" => ReduceOp::Max,
                                _ => ReduceOp::Min,
                            };
                            match elem {
                                Ty::I32 | Ty::U8 => return err(args[0].span(), format!("a reduction collects reals, `i64` or `bool`, not `{elem}`"), Some("declare it `Sum<i64>`")),
                                Ty::Bool if op == ReduceOp::Sum => return err(args[0].span(), "booleans are not summed", Some("`Max<bool>` is true if any point gives true, `Min<bool>` if all do; count with `Sum<i64>` of `x as i64`")),
                                _ => {}
                            }
                            let idx = self.reductions.len() as u32;
                            // Integers and booleans are reduced exactly in f64.
                            let ty = if elem.is_float() { elem } else { Ty::F64 };
                            self.reductions.push(ReductionParam {
                                name: name.clone(),
                                op,
                                ty,
                                result: elem,
                            });
                            self.reduction_spans.push(p.name.span);
                            self.param_order.push((ParamKind::Reduction, idx));
                            Binding::Reduction(idx)
                        }
                        sampled::SAMPLED_TYPE => {
                            self.declare_sampled(name, elem, args[0].span())?
                        }
                        axes::AXES_TYPE if matches!(elem, Ty::I32 | Ty::U8) => {
                            return err(
                                args[0].span(),
                                format!("values per axis are scalars, not `{elem}`"),
                                Some("use `Axes<i64>` for integers"),
                            );
                        }
                        axes::AXES_TYPE => self.declare_axes(name, elem),
                        HELD_TYPE => {
                            if !elem.is_float() {
                                return err(
                                    args[0].span(),
                                    format!("a value held on the backend is a real, not `{elem}`"),
                                    Some("declare it `Value<T>`, `Value<f32>` or `Value<f64>`; pass other scalars by value"),
                                );
                            }
                            self.declare_scalar(name, elem, true)
                        }
                        other => {
                            return err(head.span, format!("unknown parameter type `{other}<..>`"), Some("fields are `In<T>`, `Out<T>`, `InOut<T>`, `Fine<T>` and `Coarse<T>`; reductions are `Sum<T>`, `Max<T>`, `Min<T>`; sampled grids are `Sampled<T>`; one value per axis is `Axes<T>`; a real held on the backend is `Value<T>`"));
                        }
                    }
                }
                ast::TypeExpr::Name(id) if id.name == vertex::MESH_TYPE => {
                    self.declare_mesh(name, id.span)?
                }
                ty => {
                    let t = self.resolve_type(ty)?;
                    match self.consts.iter().find(|(c, _)| c == name) {
                        // A compile-time constant: its value, as a literal would be.
                        Some((_, ast::ConstValue::Int(v))) => {
                            self.new_local(name, Val::IntLit(*v), false)
                        }
                        Some((_, ast::ConstValue::Bool(b))) => {
                            let node = self.b.boolean(*b);
                            self.new_local(name, Val::Node(node), false)
                        }
                        None => self.declare_scalar(name, t, false),
                    }
                }
            };
            self.scopes[0].insert(name.clone(), binding);
        }
        // The members of group parameters (see `crate::groups`) say where they came from.
        // A member `Axes<T>` is one scalar per axis, each marked.
        for p in f.params.iter().filter(|p| p.member_of.is_some()) {
            for s in self.scalars.iter_mut().filter(|s| {
                s.name == p.name.name
                    || s.axis_of.as_ref().is_some_and(|(of, _)| *of == p.name.name)
            }) {
                s.member_of = p.member_of.clone();
            }
        }
        self.check_axes_names(f)
    }

    /// Declares scalar parameter `name` of type `t` (`held`: a `Value<t>`, read from the
    /// backend's memory); the body sees it as a value like any scalar.
    fn declare_scalar(&mut self, name: &str, t: Ty, held: bool) -> Binding {
        let idx = self.scalars.len() as u32;
        self.scalars.push(ScalarParam {
            name: name.to_string(),
            ty: t,
            axis_of: None,
            member_of: None,
            held,
        });
        self.param_order.push((ParamKind::Scalar, idx));
        let node = self.b.add(Node::Scalar(idx), t);
        self.new_local(name, Val::Node(node), false)
    }

    /// The type given to real literals that nothing else types: `T` in a generic kernel,
    /// else the kernel's real type if it has exactly one, else `f64`.
    pub(super) fn pick_default_real(&self, generic: bool) -> Ty {
        if generic {
            return Ty::Real;
        }
        let mut reals = self
            .fields
            .iter()
            .map(|f| f.elem)
            .chain(self.scalars.iter().map(|s| s.ty))
            .chain(self.reductions.iter().map(|r| r.ty))
            .filter(|t| t.is_float());
        match reals.next() {
            Some(t) if reals.all(|u| u == t) => t,
            _ => Ty::F64,
        }
    }

    /// The element type of a field: a scalar type, or `i32` or `u8`.
    pub(super) fn resolve_element(&self, t: &ast::TypeExpr) -> Result<Ty> {
        match t {
            ast::TypeExpr::Name(id) if id.name == "i32" => Ok(Ty::I32),
            ast::TypeExpr::Name(id) if id.name == "u8" => Ok(Ty::U8),
            t => self.resolve_type(t),
        }
    }

    pub(super) fn resolve_type(&self, t: &ast::TypeExpr) -> Result<Ty> {
        match t {
            ast::TypeExpr::Name(id) => {
                // Only the innermost function's type parameters are in scope.
                if let Some(env) = self.type_params.last() {
                    if let Some(bound) = env.get(&id.name) {
                        return bound.ok_or_else(|| LowerError {
                            span: id.span,
                            message: format!(
                                "the type `{}` is not known yet at this point",
                                id.name
                            ),
                            help: Some(
                                "pass at least one argument of this type before using it in a cast"
                                    .into(),
                            ),
                        });
                    }
                }
                match id.name.as_str() {
                    "f32" => Ok(Ty::F32),
                    "f64" => Ok(Ty::F64),
                    "i64" => Ok(Ty::Int),
                    "bool" => Ok(Ty::Bool),
                    vertex::MESH_TYPE => err(id.span, "`Mesh` is only allowed as a kernel parameter", Some("a vertex kernel takes `mesh: Mesh`; helpers take the values they need as scalars")),
                    "i32" | "u8" | "u32" | "u64" | "usize" | "isize" => err(id.span, format!("`{}` is not a stencil type", id.name), Some("integers in kernels are `i64`; `x as i32` and `x as u8` narrow a value (kept as an `i64`)")),
                    other => err(id.span, format!("unknown type `{other}`"), Some("scalar types are `T` (the kernel's `T: Real`), `f32`, `f64`, `i64` and `bool`; a cast may also narrow with `as i32` or `as u8`")),
                }
            }
            ast::TypeExpr::Tuple { span, .. } => err(
                *span,
                "a tuple type is only a helper's return type",
                Some("bind a tuple's parts with `let (a, b) = ..;`"),
            ),
            ast::TypeExpr::Apply { head, span, .. } => {
                if matches!(
                    head.name.as_str(),
                    "In" | "Out" | "InOut" | "Fine" | "Coarse" | "Sum" | "Max" | "Min" | HELD_TYPE
                ) {
                    err(
                        *span,
                        format!("`{}<..>` is only allowed as a parameter's whole type", head.name),
                        Some("a kernel or helper takes each field as a parameter of its own (`a: In<T>, b: In<T>`) or a group of them (`p: In<Pair<T>>`); locals, tuples and results hold values"),
                    )
                } else {
                    err(
                        *span,
                        format!("unknown type `{}<..>`", head.name),
                        Some("scalar types are `T`, `f32`, `f64`, `i64` and `bool`"),
                    )
                }
            }
            ast::TypeExpr::Unsupported { what, span } => err(
                *span,
                format!("{what} is not a stencil type"),
                Some("scalar types are `T`, `f32`, `f64`, `i64` and `bool`"),
            ),
        }
    }
}
