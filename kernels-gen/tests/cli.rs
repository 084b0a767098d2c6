//! The `kernels-gen` command line prints each stage for a `.stencil` file.

use std::process::Command;

fn run(args: &[&str]) -> (bool, String, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_kernels-gen"))
        .args(args)
        .output()
        .expect("run kernels-gen");
    (
        out.status.success(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

const FILE: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/examples/jacobi.stencil");

#[test]
fn prints_every_stage() {
    let (ok, ir, _) = run(&[FILE, "--emit", "ir", "--kernel", "jacobi"]);
    assert!(
        ok && ir.contains("kernel jacobi[2d, halo 1]") && ir.contains("store out"),
        "{ir}"
    );
    let (ok, llvm, _) = run(&[
        FILE,
        "--emit",
        "llvm",
        "--kernel",
        "jacobi",
        "--precision",
        "f32",
    ]);
    assert!(
        ok && llvm.contains("define void @jacobi_f32") && llvm.contains("nvvm.annotations"),
        "{llvm}"
    );
    let (ok, ptx, _) = run(&[FILE, "--emit", "ptx", "--kernel", "cfl"]);
    assert!(
        ok && ptx.contains(".entry cfl_f64") && ptx.contains("bar.sync"),
        "{ptx}"
    );
    let (ok, rust, _) = run(&[FILE, "--emit", "rust", "--kernel", "slope"]);
    assert!(
        ok && rust.contains("pub unsafe fn cpu<T: ::stencil_runtime::Real>"),
        "{rust}"
    );
}

#[test]
fn reports_errors_with_file_line_and_column() {
    let dir = std::env::temp_dir().join(format!("kg-cli-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let bad = dir.join("bad.stencil");
    std::fs::write(
        &bad,
        "#[stencil]\nfn f<T: Real>(u: In<T>, out: Out<T>) {\n    out = u[(1, 0)] * w;\n}\n",
    )
    .unwrap();
    let (ok, _, err) = run(&[bad.to_str().unwrap()]);
    assert!(!ok);
    assert!(
        err.contains("bad.stencil:line 3, column 23: unknown name `w`"),
        "{err}"
    );
    let (ok, _, err) = run(&[FILE, "--kernel", "nope"]);
    assert!(!ok && err.contains("it has: jacobi, cfl, slope"), "{err}");
    // An empty file, or Rust without kernels, says so (not "no kernel  in ...; it has: ").
    for (name, text) in [("empty.stencil", ""), ("plain.rs", "fn f() {}\n")] {
        let file = dir.join(name);
        std::fs::write(&file, text).unwrap();
        let (ok, _, err) = run(&[file.to_str().unwrap()]);
        assert!(!ok && err.contains("holds no kernels"), "{name}: {err}");
    }
    let _ = std::fs::remove_dir_all(&dir);
}
