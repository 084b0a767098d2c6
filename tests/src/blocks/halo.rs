//! Halo-exchange conformance: every halo point of every present block holds what the
//! dense field's neighbourhood and the side rules give (per-point and templated plans,
//! paired exchanges, per-side widths).

use super::*;

/// The rule the halo checks use: periodic along x, a mirror with the sign flipped below
/// y and a fixed value above it, zero gradient below z and a plain mirror above it; -7
/// where a neighbour is absent.
pub const RULE: HaloRule = HaloRule {
    sides: [
        [Side::Periodic, Side::Periodic],
        [Side::Mirror(-1.0), Side::Value(5.0)],
        [Side::Clamp, Side::Mirror(1.0)],
    ],
    absent: Absent::Value(-7.0),
};

/// What a halo point at global `p` holds under [`RULE`] on a domain `n`, for a field with
/// `value(q)` at every point `q` of the domain, or `None` where its source block is absent.
fn expected(
    n: [usize; 3],
    dims: usize,
    p: [isize; 3],
    value: &dyn Fn([usize; 3]) -> Option<f64>,
    absent: &dyn Fn([usize; 3]) -> f64,
) -> f64 {
    let mut q = p;
    let mut sign = 1.0;
    let n = n.map(|x| x as isize);
    if q[0] < 0 || q[0] >= n[0] {
        q[0] = (q[0] + n[0]) % n[0];
    }
    if dims > 1 && q[1] < 0 {
        q[1] = -1 - q[1];
        sign = -sign;
    } else if dims > 1 && q[1] >= n[1] {
        return 5.0;
    }
    if dims > 2 && q[2] < 0 {
        q[2] = 0;
    } else if dims > 2 && q[2] >= n[2] {
        q[2] = 2 * n[2] - 1 - q[2];
    }
    let q = q.map(|x| x as usize);
    match value(q) {
        Some(v) => sign * v,
        None => absent(q),
    }
}

/// After an exchange, every halo point of every present block holds [`expected`]: absent
/// neighbours by a value, a value per point, or a companion field, the whole halo or one
/// layer; the shared template (structured blocks, also at sides of fixed value) and
/// per-point entries both used; several fields in one exchange fill alike.
pub fn halo_matches_dense<T: Real>(backend: &Backend) {
    let per_point = HaloRule {
        absent: Absent::Values(std::sync::Arc::new(own_value)),
        ..RULE
    };
    let companion = HaloRule {
        absent: Absent::Companion,
        ..RULE
    };
    let all = |w: usize| [[w; 2]; 3];
    // Above only (a kernel reading its east and north neighbours): [[0, 1], [0, 1], [0, 1]].
    let above = [[0, 1]; 3];
    let cases: [(HaloRule, &PointValue, HaloWidths); 6] = [
        (RULE, &fixed_value, all(HALO)),
        (RULE, &fixed_value, above),
        (per_point.clone(), &own_value, all(HALO)),
        (per_point.clone(), &own_value, above),
        (companion.clone(), &own_value, all(HALO)),
        (companion, &own_value, all(1)),
    ];
    let (mut structured, mut per_point_blocks) = (0, 0);
    for (rule, absent, width) in &cases {
        let (s, p) = halo_case::<T>(backend, rule, absent, *width);
        structured += s;
        per_point_blocks += p;
    }
    assert!(
        structured > 0 && per_point_blocks > 0,
        "both parts of the plan are checked"
    );
}

/// A value for each point of the domain.
type PointValue = dyn Fn([usize; 3]) -> f64;

/// The value of [`RULE`]'s absent neighbours, [`Absent::Value`].
fn fixed_value(_: [usize; 3]) -> f64 {
    -7.0
}

/// The value per point of [`Absent::Values`] (and of the companion field) in the checks.
fn own_value(q: [usize; 3]) -> f64 {
    -((q[0] + 10 * q[1] + 100 * q[2]) as f64)
}

/// One rule of [`halo_matches_dense`], filling `width` layers (below, above per axis):
/// the blocks planned
/// through the template and through per-point entries.
fn halo_case<T: Real>(
    backend: &Backend,
    rule: &HaloRule,
    absent: &PointValue,
    width: HaloWidths,
) -> (usize, usize) {
    let (mut structured, mut per_point) = (0, 0);
    // Domains of whole blocks along the periodic x axis (structured across it) and not.
    for (domain, block) in [
        (vec![70usize, 40], vec![32usize, 16]),
        (vec![128, 64], vec![16, 16]),
        (vec![40, 20, 12], vec![32, 8, 4]),
        (vec![32, 32, 16], vec![8, 8, 4]),
        // Last blocks thinner than the halo: their neighbours' halos reach past the
        // domain's edge through them.
        (vec![33, 34], vec![16, 16]),
    ] {
        let dims = domain.len();
        let grid = random_grid(backend, &format!("halo {domain:?}"), &domain, &block, 0.6);
        let g = *grid.geometry();
        let f = |q: [usize; 3]| ((q[0] * 7 + q[1] * 131 + q[2] * 1013) % 997) as f64 / 8.0;
        let make = || {
            let mut field =
                BlockField::from_fn(&grid, |p| T::from_f64(f(p.map(|x| x.max(0) as usize))))
                    .unwrap();
            field.fill_halos(T::nan()).unwrap();
            field
        };
        let bits = |f: &BlockField<T>| -> Vec<u64> {
            f.arena()
                .unwrap()
                .iter()
                .map(|x| x.as_f64().to_bits())
                .collect()
        };
        let mut field = make();
        let exchange = HaloExchange::with_widths(&grid, rule, width).unwrap();
        structured += exchange.structured_blocks();
        per_point += grid.len() - exchange.structured_blocks();
        if matches!(rule.absent, Absent::Companion) {
            let e = exchange.run(&mut field).unwrap_err();
            assert!(e.to_string().contains("companion"), "{e}");
            // The companion holds at every point what an absent neighbour gives there, the
            // side rules applied.
            let values = BlockField::from_fn(&grid, |p| {
                T::from_f64(expected(g.domain, dims, p, &|_| None, &own_value))
            })
            .unwrap();
            exchange.run_with(&mut field, &values).unwrap();
            // A paired exchange fills its paired field as that, and the others as a rule
            // of zero for absent neighbours would.
            let (mut paired, mut other, mut zeroed) = (make(), make(), make());
            exchange
                .run_paired((&mut paired, &values), &mut [&mut other])
                .unwrap();
            let zero = HaloRule {
                sides: rule.sides,
                absent: Absent::Value(0.0),
            };
            let zero = HaloExchange::with_widths(&grid, &zero, width).unwrap();
            zero.run(&mut zeroed).unwrap();
            assert!(
                bits(&paired) == bits(&field),
                "{dims}D: paired field differs"
            );
            assert!(
                bits(&other) == bits(&zeroed),
                "{dims}D: unpaired field differs"
            );
        } else {
            // Several fields in one exchange (more than one launch takes, for 2D) fill as
            // one does.
            let mut twins: Vec<BlockField<T>> =
                (0..if dims == 2 { 9 } else { 1 }).map(|_| make()).collect();
            let mut all: Vec<&mut BlockField<T>> = std::iter::once(&mut field)
                .chain(twins.iter_mut())
                .collect();
            exchange.run_many(&mut all).unwrap();
            for twin in &twins {
                assert!(
                    bits(twin) == bits(&field),
                    "{dims}D: fields of one exchange differ"
                );
            }
        }
        let arena = field.arena().unwrap();
        let value = |q: [usize; 3]| present(&grid, q).then(|| f(q));
        let h = [0, 1, 2].map(|a| g.halo_on(a) as isize);
        let w = |a: usize, side: usize| g.halo_on(a).min(width[a][side]) as isize;
        let mut checked = 0;
        for (slot, info) in grid.blocks() {
            let o = g.origin(info.key);
            for k in -h[2]..g.block[2] as isize + h[2] {
                for j in -h[1]..g.block[1] as isize + h[1] {
                    for i in -h[0]..g.block[0] as isize + h[0] {
                        let p = [i, j, k];
                        let at = arena[slot * g.slot_len() + g.element(p)].as_f64();
                        let global = [0, 1, 2].map(|a| o[a] as isize + p[a]);
                        let in_block = (0..3).all(|a| p[a] >= 0 && p[a] < g.block[a] as isize);
                        let own = in_block && (0..3).all(|a| global[a] < g.domain[a] as isize);
                        if own {
                            continue;
                        }
                        let within = (0..3)
                            .all(|a| p[a] >= -w(a, 0) && p[a] < g.block[a] as isize + w(a, 1));
                        if !within && !in_block {
                            assert!(
                                at.is_nan(),
                                "{dims}D: halo point {p:?} past width {width:?} was written"
                            );
                            continue;
                        }
                        let want = expected(g.domain, dims, global, &value, absent);
                        assert_eq!(
                            at,
                            want,
                            "{dims}D {:?} width {width:?}: halo point {p:?} of block {:?} (global {global:?})",
                            T::PRECISION,
                            info.key
                        );
                        checked += 1;
                    }
                }
            }
        }
        assert!(checked > 0);
    }
    (structured, per_point)
}
