//! Fingerprints the compiler's own sources, so that the PTX and SASS cache (`cache`) never
//! serves code that another version of the compiler generated.

use std::path::{Path, PathBuf};

fn files(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        let path = entry.path();
        if path.is_dir() {
            files(&path, out);
        } else {
            out.push(path);
        }
    }
}

fn main() {
    let root = PathBuf::from(std::env::var("CARGO_MANIFEST_DIR").unwrap_or_default());
    let mut paths = vec![root.join("Cargo.toml")];
    files(&root.join("src"), &mut paths);
    // The PTX text operations the compiler shares with the run time (the grid dependency
    // point, among others).
    let shared = root.join("../ptx-text/src");
    files(&shared, &mut paths);
    paths.sort();
    // FNV-1a over each file's path (relative) and contents.
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    let mut add = |bytes: &[u8]| {
        for &b in bytes {
            h ^= b as u64;
            h = h.wrapping_mul(0x0000_0100_0000_01b3);
        }
    };
    for path in &paths {
        add(path
            .strip_prefix(&root)
            .unwrap_or(path)
            .to_string_lossy()
            .as_bytes());
        add(&std::fs::read(path).unwrap_or_default());
    }
    println!("cargo:rustc-env=KERNELS_GEN_FINGERPRINT={h:016x}");
    println!("cargo:rerun-if-changed=src");
    println!("cargo:rerun-if-changed=../ptx-text/src");
    println!("cargo:rerun-if-changed=Cargo.toml");
    // SASS ahead of time (`sass.rs`): the architectures asked for and where ptxas is are
    // part of the compiler as built, so that changing them re-expands every kernel.
    for var in ["STENCIL_SASS", "STENCIL_PTXAS"] {
        println!("cargo:rerun-if-env-changed={var}");
        let value = std::env::var(var).unwrap_or_default();
        println!("cargo:rustc-env={var}_AT_BUILD={value}");
    }
}
