//! The adaptive cavity's kernels (the wavelet transform and the Poisson solve across
//! levels) assemble with `ptxas` for sm_80 and sm_90 without spills: their device code is
//! checked without a GPU (`STENCIL_REQUIRE_PTXAS=1` makes a missing ptxas fail).

use cavity::adaptive::kernels::poisson;
use cavity::adaptive::wavelet::transform;

macro_rules! ptx {
    ($($($k:ident)::+),* $(,)?) => {
        [$(
            ($($k)::+::NAME, $($k)::+::PTX_F32, $($k)::+::ENTRY_F32),
            ($($k)::+::NAME, $($k)::+::PTX_F64, $($k)::+::ENTRY_F64),
        )*]
    };
}

#[test]
fn the_adaptive_kernels_assemble_without_spills() {
    let Some(ptxas) = stencil_tests::ptxas::required() else {
        return;
    };
    let kernels = ptx!(
        transform::detail,
        transform::reconstruct,
        transform::classify,
        transform::copy,
        poisson::relax,
        poisson::residual,
        poisson::full_weighting,
        poisson::coarse_rhs,
        poisson::difference,
        poisson::correct,
        poisson::norms,
        poisson::uncovered,
    );
    let dir = tempfile::tempdir().expect("temp dir");
    for (name, ptx, entry) in kernels {
        let file = dir.path().join(format!("{entry}.ptx"));
        std::fs::write(&file, ptx).expect("write ptx");
        for arch in ["sm_80", "sm_90"] {
            let cubin = dir.path().join(format!("{entry}_{arch}.cubin"));
            let log = stencil_tests::ptxas::assemble(&ptxas, &file, arch, &cubin)
                .unwrap_or_else(|log| panic!("{name} ({entry}) for {arch}: ptxas failed:\n{log}"));
            assert!(
                log.contains("0 bytes spill stores"),
                "{name} ({entry}) {arch} spills:\n{log}"
            );
        }
    }
}
