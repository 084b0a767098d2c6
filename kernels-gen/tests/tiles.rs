//! Structure of the PTX tile variants (each thread computes several points) of the kernels
//! that read or write in ways a plain stencil does not: red-black sweeps, in-place
//! updates, grid transfers. Counts of instructions per entry, not golden files; that the
//! variants compute the right values is checked on a GPU (`gpu_conformance`,
//! `multigrid`'s `gpu_kernels`).
#![cfg(feature = "llvm")]

use kernels_gen::compile_text;
use kernels_gen::ir::{Kernel, Precision};
use kernels_gen::llvm;

fn one(src: &str) -> Kernel {
    let mut ks = compile_text(src).unwrap_or_else(|e| panic!("{e}\n{src}"));
    assert_eq!(ks.len(), 1);
    ks.remove(0)
}

/// The body of entry `name` in `ptx`.
fn entry<'a>(ptx: &'a str, name: &str) -> &'a str {
    let start = ptx
        .find(&format!(".entry {name}("))
        .unwrap_or_else(|| panic!("no entry {name}"));
    let body = &ptx[start..];
    let end = body.find("\n}\n").expect("the entry's end");
    &body[..end]
}

fn count(body: &str, instruction: &str) -> usize {
    body.lines()
        .filter(|l| l.trim_start().starts_with(instruction))
        .count()
}

/// A red-black sweep with one division per updated point.
const RED_BLACK: &str = "#[stencil(red_black = colour)]
fn sweep<T: Real>(e: InOut<T>, r: In<T>, d: In<T>, colour: i64) {
    e = (r + e[(-1, 0)] + e[(1, 0)] + e[(0, -1)] + e[(0, 1)]) / d;
}";

#[test]
fn red_black_kernels_get_tile_variants() {
    let k = one(RED_BLACK);
    let tiles = llvm::tile_variants(&k);
    assert_eq!((tiles.scalar, tiles.vector), (&[1][..], &[1, 2, 4][..]));
    assert_eq!(llvm::vector_width(&k, Precision::F32), 4);
    let ptx = llvm::ptx(&k, Precision::F32).expect("ptx");
    for name in [
        "sweep_f32",
        "sweep_f32_v4",
        "sweep_f32_v4_p2",
        "sweep_f32_v4_p4",
    ] {
        entry(&ptx, name);
    }
    assert_eq!(ptx.matches(".entry ").count(), 4, "only the rule's entries");
}

/// The entries each kind of kernel gets (`llvm::tile_variants`): vectors of 1, 2 or 4
/// points where fields are all reals; several points without vectors where some field
/// holds integers; one entry for 1D and line kernels.
#[test]
fn each_kind_of_kernel_gets_the_rule_s_entries() {
    let entries = |src: &str| {
        let k = one(src);
        let ptx = llvm::ptx(&k, Precision::F64).expect("ptx");
        let mut names: Vec<String> = ptx
            .lines()
            .filter_map(|l| l.strip_prefix(".visible .entry "))
            .map(|l| l[..l.find('(').expect("(")].to_string())
            .collect();
        names.sort();
        names
    };
    assert_eq!(
        entries("#[stencil]\nfn heat<T: Real>(u: In<T>, out: Out<T>) { out = u[(1, 0, 0)] + u[(0, 0, -1)]; }"),
        ["heat_f64", "heat_f64_v2", "heat_f64_v2_p2", "heat_f64_v2_p4"]
    );
    assert_eq!(
        entries("#[stencil]\nfn count(c: In<u8>, out: Out<i32>) { out = c[(1, 0)] + c[(0, -1)]; }"),
        ["count_f64", "count_f64_p2", "count_f64_p4"]
    );
    assert_eq!(
        entries("#[stencil]\nfn diff<T: Real>(u: In<T>, out: Out<T>) { out = u[1] - u[-1]; }"),
        ["diff_f64"]
    );
}

/// A tile of 4 x 2 points holds 4 of each colour. Its fast path is emitted twice (the
/// colour being updated at even or at odd offsets from the first point), each copy
/// dividing for its 4 updated points only; the guarded path at the far edges divides for
/// each of the 8 points.
#[test]
fn a_red_black_tile_computes_only_the_colour_it_updates() {
    let k = one(RED_BLACK);
    let ptx = llvm::ptx(&k, Precision::F32).expect("ptx");
    let tile = entry(&ptx, "sweep_f32_v4_p2");
    assert_eq!(count(tile, "div.rn.f32"), 2 * 4 + 8, "{tile}");
    let single = entry(&ptx, "sweep_f32");
    assert_eq!(count(single, "div.rn.f32"), 1, "{single}");
}

/// A red-black tile reads the rows of the field it updates whole, with vector loads
/// through the non-coherent path (no other thread writes the values it uses).
#[test]
fn a_red_black_tile_reads_rows_with_vector_loads() {
    let k = one(RED_BLACK);
    let ptx = llvm::ptx(&k, Precision::F64).expect("ptx");
    let tile = entry(&ptx, "sweep_f64_v2_p4");
    // Rows -1..=4 of `e` and rows 0..4 of `r` and `d`, two points wide.
    assert!(count(tile, "ld.global.nc.v2.f64") >= 6 + 4 + 4, "{tile}");
}

/// A restriction's tile of 4 coarse points along x reads the fine row whole: the fine
/// values at offsets 0..8 come as two vector loads.
#[test]
fn a_restriction_tile_reads_fine_rows_with_vector_loads() {
    let k = one("#[stencil]
        fn restrict<T: Real>(fine: Fine<T>, coarse: Out<T>) {
            coarse = 0.25 * fine[(-1, 0)] + 0.5 * fine + 0.25 * fine[(1, 0)];
        }");
    let ptx = llvm::ptx(&k, Precision::F32).expect("ptx");
    let tile = entry(&ptx, "restrict_f32_v4");
    assert_eq!(count(tile, "ld.global.nc.v4.f32"), 2, "{tile}");
    assert_eq!(count(tile, "st.global.v4.f32"), 1, "{tile}");
}

/// A prolongation's tile reads its coarse field with scalar loads (the coarse index of the
/// tile's first point is aligned to half a vector only), each coarse value once.
#[test]
fn a_prolongation_tile_shares_coarse_reads() {
    let k = one("#[stencil]
        fn prolong<T: Real>(coarse: Coarse<T>, fine: Out<T>) {
            fine = 0.5 * (coarse + coarse[(1, 0)]);
        }");
    let ptx = llvm::ptx(&k, Precision::F32).expect("ptx");
    let tile = entry(&ptx, "prolong_f32_v4");
    // Fast path: coarse offsets 0, 1, 2 along x for the 4 fine points (pairs share a
    // parent); the edge path loads for each point on its own.
    let fast_and_edge = count(tile, "ld.global.nc.f32");
    assert!(fast_and_edge <= 3 + 4 * 2, "{fast_and_edge}\n{tile}");
    assert_eq!(count(tile, "ld.global.nc.v"), 0, "{tile}");
}
