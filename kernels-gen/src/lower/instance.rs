//! Lowering one kernel instance: the checks made before its body (return type, generics,
//! dimensions, halo, line axis), the [`Lowerer`] it is lowered by, and its body.

use super::*;
use dims::infer_dims;

/// Lowers kernel `f` of `module` with its compile-time constant parameters bound to the
/// values `bound` (see [`consts`]).
pub(super) fn lower_instance(
    module: &Module,
    f: &FnDef,
    bound: &[(String, ast::ConstValue)],
) -> Result<Kernel> {
    if let Some(ret) = &f.ret {
        return err(
            ret.span(),
            "a kernel returns nothing",
            Some("write results to `Out<T>` fields or reductions; remove the return type"),
        );
    }
    let generic = check_generics(f)?;
    early::no_unsupported_constructs(module, f)?;
    let dims = match vertex::mesh_param(f) {
        Some(_) => vertex::check_attrs(f)?,
        None => match infer_dims(module, f) {
            Ok(dims) => dims,
            // The body may hold the real error (a helper's bad parameter, an unknown
            // name): one that lowering reports whatever the dimension is comes first.
            Err(unknown) if f.attrs.dims.is_none() => {
                let mut errors =
                    (1..=3).map(|d| lower_with_dims(module, f, bound, generic.clone(), d));
                let first = errors.next().and_then(|r| r.err());
                return Err(match first {
                    Some(e)
                        if errors.all(|r| {
                            r.err()
                                .is_some_and(|o| o.span == e.span && o.message == e.message)
                        }) =>
                    {
                        e
                    }
                    _ => unknown,
                });
            }
            Err(e) => return Err(e),
        },
    };
    lower_with_dims(module, f, bound, generic, dims)
}

/// Lowers kernel `f` as [`lower_instance`] does, once it is known to have `dims` axes.
fn lower_with_dims(
    module: &Module,
    f: &FnDef,
    bound: &[(String, ast::ConstValue)],
    generic: Option<String>,
    dims: u8,
) -> Result<Kernel> {
    let declared_halo = match f.attrs.halo {
        Some((h, span)) if h as i32 > MAX_OFFSET => {
            return err(
                span,
                format!("halo {h} is larger than the largest supported offset ({MAX_OFFSET})"),
                Some("split the stencil into several kernels"),
            )
        }
        other => other.map(|(h, _)| h),
    };
    let mut l = Lowerer {
        module,
        b: KernelBuilder::new(),
        dims,
        declared_halo,
        default_real: Ty::F64,
        fields: vec![],
        field_spans: vec![],
        scalars: vec![],
        reductions: vec![],
        sampled: vec![],
        reduction_spans: vec![],
        param_order: vec![],
        state: State {
            slots: vec![],
            outputs: HashMap::new(),
            contributions: HashMap::new(),
        },
        scopes: vec![HashMap::new()],
        type_params: vec![generic
            .iter()
            .map(|g| (g.clone(), Some(Ty::Real)))
            .collect()],
        call_stack: vec![f.name.name.clone()],
        unrolled: 0,
        line_axis: None,
        red_black: f.attrs.red_black.is_some(),
        tridiagonal: None,
        mesh: None,
        loops: Vec::new(),
        in_loop: None,
        open_loops: Vec::new(),
        tuples: Vec::new(),
        consts: bound.to_vec(),
        stages: Vec::new(),
    };
    if let Some((axis, span)) = f.attrs.line {
        if axis >= dims {
            return err(
                span,
                format!("line axis {axis} is not an axis of this {dims}D kernel"),
                Some(&format!("use an axis from 0 to {}", dims - 1)),
            );
        }
        l.line_axis = Some(axis);
    }
    l.declare_params(f)?;
    l.default_real = l.pick_default_real(generic.is_some());
    if let Some(tail) = &f.body.tail {
        if l.block(&f.body)?.is_some() {
            return err(
                tail.span,
                "a kernel's body cannot end in a value",
                Some("assign it to an output (`out = ...;`) or end the expression with `;`"),
            );
        }
    } else {
        l.block(&f.body)?;
    }
    l.finish(f)
}

/// The kernel's or helper's type parameter (`T` of `<T: Real>`), after checking there is
/// at most one and that it is bounded by `Real`.
pub(super) fn check_generics(f: &FnDef) -> Result<Option<String>> {
    match f.generics.as_slice() {
        [] => Ok(None),
        [g] => {
            if g.bounds.len() != 1 || g.bounds[0].name != "Real" {
                return err(
                    g.name.span,
                    format!("type parameter `{}` must be bounded by `Real`", g.name.name),
                    Some("write `<T: Real>`: kernels are generic over f32 and f64 only"),
                );
            }
            Ok(Some(g.name.name.clone()))
        }
        [_, second, ..] => err(
            second.name.span,
            "a stencil function takes at most one type parameter",
            Some("use one `T: Real` for the precision; other types are concrete (f32, f64, i64, bool)"),
        ),
    }
}
