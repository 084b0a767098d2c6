//! Checks on the PTX every kernel embeds: its structure, and that `ptxas` assembles it for
//! sm_80 and sm_90 without spills, also as the runtime specialises it for programmatic
//! dependent launch.
//!
//! `ptxas` comes from the PyPI package `nvidia-cuda-nvcc-cu12`; it is found on `PATH`, through
//! `PTXAS`, or in that package's folder. Without it the assembly test prints why it
//! skipped, unless `STENCIL_REQUIRE_PTXAS=1` (CI sets it), which makes a missing ptxas fail.

use stencil_runtime::cuda::{
    block_flags_code, for_dependent_launch, halo_exchange_code, halo_weighted_code, only_entry,
    pack_points_code, GRID_DEPENDENCY_POINT,
};
use stencil_tests::kernels::{bits, held, life, suite, ALL, BANDWIDTH_BOUND};
use stencil_tests::ptxas::Assembler;

/// The kernels outside [`ALL`] (fields of integers and booleans, cell-centred transfers,
/// values held on the device):
/// name, then the f32 and the f64 PTX with their entries.
type Entries = (
    &'static str,
    (&'static str, &'static str),
    (&'static str, &'static str),
);

macro_rules! entries {
    ($($($k:ident)::+),* $(,)?) => {
        [$(($($k)::+::NAME, ($($k)::+::PTX_F32, $($k)::+::ENTRY_F32), ($($k)::+::PTX_F64, $($k)::+::ENTRY_F64))),*]
    };
}

const EXTRA: [Entries; 11] = entries!(
    life::generation,
    life::flags,
    life::census,
    bits::mix,
    bits::narrow,
    suite::restrict_cells,
    suite::prolong_cells,
    suite::prolong_nodes,
    held::largest,
    held::clock,
    held::relax,
);

#[test]
fn a_held_value_is_read_from_memory_after_the_grid_dependency_point() {
    // `dt: Value<T>` is an address parameter, loaded once the launch before (which may
    // have written it) has finished.
    for ptx in [held::relax::PTX_F32, held::relax::PTX_F64] {
        let entry = &ptx[ptx.find(".entry").expect("an entry")..];
        let wait = entry
            .find(GRID_DEPENDENCY_POINT)
            .expect("a dependency point");
        let load = entry.find("ld.global").expect("a load of the held value");
        assert!(
            wait < load,
            "the held value is read before the dependency point"
        );
    }
}

/// Every PTX module checked: the run time's own kernels, the suite's and the others, as
/// name, text and entry.
fn all_ptx() -> impl Iterator<Item = (&'static str, &'static str, &'static str)> {
    let runtime = [
        ("halo_exchange", halo_exchange_code()),
        ("block_flags", block_flags_code()),
        ("halo_weighted", halo_weighted_code()),
        ("pack_points", pack_points_code()),
    ]
    .into_iter()
    .flat_map(|(name, code)| code.iter().map(move |p| (name, p.text, p.entry)));
    let suite = ALL
        .iter()
        .map(|c| (c.name, c.ptx_f32, c.ptx_f64))
        .chain(EXTRA);
    runtime.chain(suite.flat_map(|(name, f32, f64)| [(name, f32.0, f32.1), (name, f64.0, f64.1)]))
}

#[test]
fn every_kernel_has_its_entry_and_targets_sm80() {
    for (name, ptx, entry) in all_ptx() {
        assert!(
            ptx.contains(&format!(".visible .entry {entry}(")),
            "{name}: no entry {entry}"
        );
        assert!(ptx.contains(".target sm_80"), "{name}: target");
        assert!(ptx.contains(".version 7.0"), "{name}: PTX ISA version");
    }
}

/// The PTX entries of a module: each entry's text from its `.entry` line to the next.
fn entries(ptx: &str) -> Vec<&str> {
    let starts: Vec<usize> = ptx.match_indices(".entry ").map(|(i, _)| i).collect();
    starts
        .iter()
        .enumerate()
        .map(|(k, &a)| &ptx[a..starts.get(k + 1).copied().unwrap_or(ptx.len())])
        .collect()
}

/// The names of a module's entries.
fn entry_names(ptx: &str) -> Vec<&str> {
    entries(ptx)
        .iter()
        .map(|e| {
            let rest = &e[".entry ".len()..];
            &rest[..rest.find('(').expect("an entry's parameters")]
        })
        .collect()
}

/// A kernel's tile variants are generated as modules of their own and merged: each
/// global (a constant table) must be defined once, or the driver rejects the module.
#[test]
fn merged_variants_define_each_global_once() {
    for (name, ptx, _) in all_ptx() {
        let mut seen = std::collections::HashSet::new();
        for line in ptx.lines().filter(|l| l.starts_with(".global ")) {
            let decl = line.split('=').next().expect("a declaration");
            assert!(seen.insert(decl), "{name}: `{decl}` defined twice");
        }
    }
    // The tiled sine's variants each use the sine's reduction table.
    for ptx in [suite::tiled_sine::PTX_F32, suite::tiled_sine::PTX_F64] {
        assert_eq!(entry_names(ptx).len(), 4, "{ptx}");
        assert_eq!(
            ptx.matches(".global .align 8 .b8 stencil_two_over_pi[")
                .count(),
            1
        );
    }
}

#[test]
fn each_entry_cut_out_alone_is_its_text_in_the_module() {
    let mut cut = 0;
    for (name, ptx, _) in all_ptx() {
        let header = &ptx[..ptx.find(".visible .entry").expect("an entry")];
        for entry in entry_names(ptx) {
            let alone = only_entry(ptx, entry).unwrap_or_else(|| panic!("{name}: no {entry}"));
            let start = ptx
                .find(&format!(".visible .entry {entry}("))
                .expect("the entry");
            let end = start + ptx[start..].find("\n}\n").expect("the entry's end") + 3;
            let own = &ptx[start..end];
            assert_eq!(entries(&alone).len(), 1, "{name}: {entry} alone:\n{alone}");
            assert!(
                alone.contains(own),
                "{name}: {entry} is not whole:\n{alone}"
            );
            for line in header.lines().filter(|l| !l.contains(".globl")) {
                assert!(alone.contains(line), "{name}: {entry} lost `{line}`");
            }
            cut += 1;
        }
    }
    assert!(cut > all_ptx().count(), "{cut} entries");
}

#[test]
fn ptxas_assembles_entries_cut_out_alone() {
    let Some(ptxas) = Assembler::required("ptx-alone") else {
        return;
    };
    // The kernels of the suite that are bandwidth bound (2D and 3D, every tile variant),
    // as the runtime loads them on a device with programmatic dependent launch.
    for c in ALL.iter().filter(|c| BANDWIDTH_BOUND.contains(&c.name)) {
        for (ptx, _) in [c.ptx_f32, c.ptx_f64] {
            for entry in entry_names(ptx) {
                let alone = only_entry(ptx, entry).expect("the entry");
                let text = for_dependent_launch(&alone).expect("dependency points");
                ptxas.assemble(&format!("{entry}_alone"), &text, "sm_90");
            }
        }
    }
}

#[test]
fn every_entry_waits_for_the_grids_it_depends_on_before_touching_memory() {
    for (name, ptx, _) in all_ptx() {
        // A staged kernel's entry has no point: it starts after the kernel before it and
        // is launched without programmatic serialisation (`llvm/codegen/entry.rs`).
        if ptx.contains(".extern .shared") {
            assert!(!ptx.contains(GRID_DEPENDENCY_POINT), "{name}");
            assert!(for_dependent_launch(ptx).is_none(), "{name}");
            continue;
        }
        for entry in entries(ptx) {
            let head = entry.lines().next().unwrap_or_default();
            let Some(point) = entry.find(GRID_DEPENDENCY_POINT) else {
                panic!("{name}: {head} has no grid dependency point");
            };
            for access in ["ld.global", "st.global", "atom.", "red.", "tex."] {
                if let Some(first) = entry.find(access) {
                    assert!(
                        point < first,
                        "{name}: {head} has {access} before its grid dependency point"
                    );
                }
            }
        }
        // On a device with dependent launches every point becomes a wait.
        let specialised = for_dependent_launch(ptx).expect("dependency points");
        assert!(!specialised.contains(GRID_DEPENDENCY_POINT), "{name}");
        assert_eq!(
            specialised.matches("griddepcontrol.wait;").count(),
            entries(ptx).len(),
            "{name}: one wait per entry"
        );
        assert!(specialised.contains(".version 7.8") && specialised.contains(".target sm_90"));
    }
}

#[cfg(feature = "jit")]
#[test]
fn the_runtime_looks_for_the_dependency_point_the_compiler_writes() {
    assert_eq!(
        kernels_gen::llvm::GRID_DEPENDENCY_POINT,
        GRID_DEPENDENCY_POINT
    );
}

/// Kernels with an in-place field (`InOut`): written during the launch, it is read with
/// plain loads.
const IN_PLACE: &[&str] = &["flags", "clock"];

#[test]
fn inputs_are_read_through_the_non_coherent_path() {
    for (name, ptx, _) in all_ptx().filter(|(name, _, _)| !IN_PLACE.contains(name)) {
        assert!(
            ptx.contains("ld.global.nc."),
            "{name}: inputs not loaded with ld.global.nc"
        );
        // Every global load of an input is non-coherent: no plain ld.global of data.
        let plain = ptx
            .lines()
            .filter(|l| l.contains("ld.global.") && !l.contains("ld.global.nc."))
            .count();
        assert_eq!(plain, 0, "{name}: {plain} plain global loads");
    }
}

#[test]
fn bandwidth_bound_kernels_use_no_local_memory() {
    for (name, ptx, _) in all_ptx().filter(|(n, _, _)| BANDWIDTH_BOUND.contains(n)) {
        for bad in [".local", "ld.local", "st.local", "__local_depot"] {
            assert!(!ptx.contains(bad), "{name}: uses local memory ({bad})");
        }
    }
}

#[test]
fn reductions_combine_in_shared_memory_with_barriers() {
    for (name, ptx, _) in all_ptx().filter(|(n, _, _)| ["cfl", "mass"].contains(n)) {
        assert!(ptx.contains(".shared"), "{name}: no shared memory");
        assert!(ptx.contains("bar.sync"), "{name}: no barrier");
    }
    for (name, ptx, _) in all_ptx().filter(|(n, _, _)| *n == "lap5") {
        assert!(
            !ptx.contains("bar.sync"),
            "{name}: a stencil without reductions needs no barrier"
        );
    }
}

#[test]
fn ptxas_assembles_every_kernel_for_sm80_and_sm90_without_spills() {
    let Some(ptxas) = Assembler::required("ptx") else {
        return;
    };
    let mut assembled = 0;
    for (name, ptx, entry) in all_ptx() {
        // As generated (any device from sm_80), and as the runtime loads it on devices with
        // programmatic dependent launch (a staged kernel, which has no dependency points,
        // as generated).
        let staged = ptx.contains(".extern .shared");
        let dependent = for_dependent_launch(ptx)
            .or_else(|| staged.then(|| ptx.to_string()))
            .expect("dependency points");
        let dependent_stem = format!("{entry}_dependent");
        for (arch, stem, text) in [
            ("sm_80", entry, ptx),
            ("sm_90", entry, ptx),
            ("sm_90", dependent_stem.as_str(), dependent.as_str()),
        ] {
            let log = ptxas.assemble(stem, text, arch);
            assert!(
                log.contains("0 bytes spill stores"),
                "{name} ({stem}) {arch} spills:\n{log}"
            );
            assembled += 1;
        }
    }
    println!("ptxas assembled {assembled} kernels");
    // The kernels of the suite and the others, the halo exchange, its weighted fill, the
    // block flags and the point pack.
    assert_eq!(assembled, (ALL.len() + EXTRA.len() + 4) * 6);
}

#[test]
fn the_halo_exchange_takes_what_the_runtime_passes() {
    // Twelve values, then eight arenas and eight companions: the runtime's `HaloLaunch`
    // (stencil-runtime/src/cuda/launch/blocks.rs, `HALO_FIELDS` = 8) pushes 28.
    for p in halo_exchange_code() {
        let (header, params) = entry_parameters(p.text);
        assert_eq!(params, 12 + 2 * 8, "{}: {header}", p.entry);
    }
    // Four values, then eight arenas: `queue_points` pushes 12 for either kernel.
    for p in halo_weighted_code().iter().chain(pack_points_code()) {
        let (header, params) = entry_parameters(p.text);
        assert_eq!(params, 4 + 8, "{}: {header}", p.entry);
    }
}

/// The header of the first entry of `ptx`, to the end of its parameter list, and how many
/// parameters it takes.
fn entry_parameters(ptx: &str) -> (&str, usize) {
    let start = ptx.find(".entry").expect("an entry");
    let header = &ptx[start..];
    let header = &header[..header.find(')').expect("a parameter list")];
    (header, header.matches(".param ").count())
}
