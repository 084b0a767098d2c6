//! The one-pass stage's PTX assembles with ptxas for sm_90 without spilling registers:
//! `kp07::stage_in_one` (every entry of 1, 2 and 4 points per thread) and its CFL pass
//! `kp07::face_speeds`. Prints each entry's registers. (The two-pass `faces` is not
//! checked: its f64 entry of 2 x 4 points spills.)
//! Skips, saying why, without ptxas (CI requires it: `STENCIL_REQUIRE_PTXAS=1`).

use shallow_water::kernels::kp07;

#[test]
fn the_stage_kernels_assemble_without_spills() {
    let Some(ptxas) = stencil_tests::ptxas::required() else {
        return;
    };
    let dir = stencil_tests::ptxas::scratch_dir("shallow-water-ptx");
    let kernels = [
        (
            "stage_in_one",
            [kp07::stage_in_one::PTX_F32, kp07::stage_in_one::PTX_F64],
        ),
        (
            "face_speeds",
            [kp07::face_speeds::PTX_F32, kp07::face_speeds::PTX_F64],
        ),
    ];
    let mut entries = 0;
    for (name, texts) in kernels {
        for (precision, ptx) in ["f32", "f64"].into_iter().zip(texts) {
            let file = dir.join(format!("{name}_{precision}.ptx"));
            std::fs::write(&file, ptx).expect("write ptx");
            let cubin = dir.join(format!("{name}_{precision}.cubin"));
            let log = stencil_tests::ptxas::assemble(&ptxas, &file, "sm_90", &cubin)
                .unwrap_or_else(|log| panic!("{name} {precision}: ptxas failed:\n{log}"));
            let spills = log.matches("0 bytes spill stores").count();
            let used: Vec<&str> = log.lines().filter(|l| l.contains("registers")).collect();
            assert!(!used.is_empty(), "{name} {precision}: no report:\n{log}");
            assert_eq!(spills, used.len(), "{name} {precision} spills:\n{log}");
            for line in used {
                println!(
                    "{name} {precision}: {}",
                    line.trim_start_matches("ptxas info    : ")
                );
            }
            entries += spills;
        }
    }
    let _ = std::fs::remove_dir_all(&dir);
    // Three entries of the staged kernel and four of the CFL pass, per precision.
    assert_eq!(entries, 2 * (3 + 4), "entries");
}
