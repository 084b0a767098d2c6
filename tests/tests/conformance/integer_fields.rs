//! Conway's Game of Life on a field of bytes, and a field of booleans and one of `i32`:
//! integer and boolean fields are read as `i64` and `bool` values, written back wrapped;
//! the CPU path against the rules written in Rust.

use stencil_runtime::prelude::*;
use stencil_tests::kernels::life;

fn rule(cells: &[u8], n: [usize; 2], i: usize, j: usize) -> u8 {
    let at = |x: isize, y: isize| -> u8 {
        if x < 0 || y < 0 || x >= n[0] as isize || y >= n[1] as isize {
            0
        } else {
            cells[x as usize + n[0] * y as usize]
        }
    };
    let mut around = 0;
    for dj in -1..=1 {
        for di in -1..=1 {
            if di != 0 || dj != 0 {
                around += at(i as isize + di, j as isize + dj);
            }
        }
    }
    u8::from(around == 3 || (at(i as isize, j as isize) == 1 && around == 2))
}

#[test]
fn game_of_life_and_flags_on_the_cpu() {
    let n = [23usize, 17];
    let start = |[i, j, _]: [isize; 3]| -> u8 {
        let inside = i >= 0 && j >= 0 && i < 23 && j < 17;
        u8::from(inside && (i * 7 + j * 3 + i * j) % 5 < 2)
    };
    let mut cells = Field::<u8>::from_fn(&n, 1, start);
    for _ in 0..4 {
        let before = cells.interior().unwrap();
        let mut next = Field::<u8>::zeros(&n, 1).unwrap();
        life::generation::launch(&Backend::Cpu, &cells, &mut next).unwrap();
        let after = next.interior().unwrap();
        for j in 0..n[1] {
            for i in 0..n[0] {
                assert_eq!(after[i + n[0] * j], rule(&before, n, i, j), "({i}, {j})");
            }
        }
        cells = next;
    }
    let (population, most, any, all) = life::census::launch(&Backend::Cpu, &cells).unwrap();
    let c = cells.interior().unwrap();
    let want_most = (0..n[1])
        .flat_map(|j| (0..n[0]).map(move |i| (i, j)))
        .map(|(i, j)| {
            let at = |x: isize, y: isize| cells.get([x, y, 0]).unwrap() as i64;
            let (i, j) = (i as isize, j as isize);
            (-1..=1)
                .flat_map(|b| (-1..=1).map(move |a| (a, b)))
                .map(|(a, b)| at(i + a, j + b))
                .sum::<i64>()
        })
        .max()
        .unwrap();
    assert_eq!(population, c.iter().map(|&x| i64::from(x)).sum::<i64>());
    assert_eq!(most, want_most);
    assert_eq!((any, all), (c.contains(&1), c.iter().all(|&x| x == 1)));
    assert!(any && !all && population > 0);
    let mut alive = Field::<bool>::zeros(&n, 0).unwrap();
    let mut count = Field::<i32>::from_fn(&n, 0, |[i, _, _]| i as i32);
    life::flags::launch(&Backend::Cpu, &cells, &mut alive, &mut count).unwrap();
    let (c, a, k) = (
        cells.interior().unwrap(),
        alive.interior().unwrap(),
        count.interior().unwrap(),
    );
    for p in 0..c.len() {
        assert_eq!(a[p], c[p] == 1, "point {p}");
        let i = (p % n[0]) as i32;
        let want = if c[p] == 1 {
            i.wrapping_add(i32::MAX)
        } else {
            i
        };
        assert_eq!(k[p], want, "point {p}");
    }
}

#[test]
fn bit_operations_on_integer_fields_on_the_cpu() {
    use stencil_tests::kernels::bits;
    let n = [37usize, 11];
    let a = Field::<i32>::from_fn(&n, 0, |[i, j, _]| (i * 7919 - j * 104_729) as i32 * 977);
    let b = Field::<u8>::from_fn(&n, 0, |[i, j, _]| ((i * 13 + j * 31) % 256) as u8);
    let mut mixed = Field::<i32>::zeros(&n, 0).unwrap();
    let mut odd = Field::<bool>::zeros(&n, 0).unwrap();
    bits::mix::launch(&Backend::Cpu, &a, &b, &mut mixed, &mut odd).unwrap();
    let (av, bv) = (a.interior().unwrap(), b.interior().unwrap());
    let (mv, ov) = (mixed.interior().unwrap(), odd.interior().unwrap());
    for p in 0..av.len() {
        let (x, y) = (i64::from(av[p]), i64::from(bv[p]));
        let mut m = x ^ (y << 3);
        m &= 65535;
        m |= x >> 2;
        m ^= x.wrapping_shl(40).wrapping_neg() >> 45;
        assert_eq!(mv[p], m as i32, "point {p}");
        assert_eq!(ov[p], ((x & 1) == 1) ^ (y > 100), "point {p}");
    }
}

#[test]
fn narrow_casts_give_what_rust_gives_on_the_cpu() {
    use stencil_tests::kernels::bits;
    let n = [29usize, 13];
    let a = Field::<i32>::from_fn(&n, 0, |[i, j, _]| (i * 7919 - j * 104_729) as i32 * 977);
    let specials = [f64::NAN, 3e9, -3e9, 255.5, 256.0, -0.7, 1e300, -1e300];
    let r = Field::<f64>::from_fn(&n, 0, |[i, j, _]| {
        let k = (i + j * 29) as usize;
        specials
            .get(k)
            .copied()
            .unwrap_or((i * 37 - j * 101) as f64 * 1.37e7)
    });
    let mut outs: Vec<Field<f64>> = (0..4).map(|_| Field::zeros(&n, 0).unwrap()).collect();
    let [w, b, s, sb] = &mut outs[..] else {
        unreachable!()
    };
    bits::narrow::launch(&Backend::Cpu, &a, &r, w, b, s, sb).unwrap();
    let (av, rv) = (a.interior().unwrap(), r.interior().unwrap());
    let got: Vec<Vec<f64>> = outs.iter().map(|f| f.interior().unwrap()).collect();
    for p in 0..av.len() {
        let x = i64::from(av[p]);
        let big = x * 4099 + (x << 20);
        assert_eq!(got[0][p], f64::from(big as i32), "point {p}");
        assert_eq!(got[1][p], f64::from(big as u8), "point {p}");
        assert_eq!(got[2][p], f64::from(rv[p] as i32), "point {p}: {}", rv[p]);
        assert_eq!(got[3][p], f64::from(rv[p] as u8), "point {p}: {}", rv[p]);
    }
}
