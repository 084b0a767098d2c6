//! A disk cache of generated code (PTX, and SASS where asked: [`crate::sass`]), so that
//! rebuilding a crate costs nothing for the kernels that did not change: rustc expands
//! every `#[stencil]` of a crate again whenever any of its files changes, and the LLVM work
//! of a kernel's PTX (and ptxas's, for its SASS) is most of that expansion.
//!
//! A PTX entry is keyed by the kernel's checked IR (its full `Debug` form), the precision,
//! the sampling, and a fingerprint of this compiler's sources (made by the build script), so
//! a changed kernel or compiler never meets an old entry; a SASS entry by the PTX text, ptxas's
//! version and its arguments (the architecture). Entries live in
//! `stencil-cache/` under the target directory: `$STENCIL_CACHE_DIR` if set, else
//! `$CARGO_TARGET_DIR`, else `target/` beside the `Cargo.lock` above the crate being
//! built. `STENCIL_CACHE=off` turns the cache off; a cache that cannot be read or written
//! is passed by (the code is generated as without one).

#[cfg(feature = "llvm")]
use crate::ir::{Kernel, Precision};
#[cfg(feature = "llvm")]
use crate::llvm::{ptx_with, LlvmError, Sampling};
use std::path::PathBuf;

/// The fingerprint of this compiler's sources.
#[cfg(feature = "llvm")]
const FINGERPRINT: &str = env!("KERNELS_GEN_FINGERPRINT");

/// The PTX of `k` at `p` (see [`ptx_with`]), from the cache when an entry exists, else
/// generated and stored.
#[cfg(feature = "llvm")]
pub fn cached_ptx(k: &Kernel, p: Precision, sampling: Sampling) -> Result<String, LlvmError> {
    let key = format!("{FINGERPRINT}\n{p:?}\n{sampling:?}\n{k:?}");
    let is_text = |b: &[u8]| std::str::from_utf8(b).is_ok();
    let text = cached(&key, "ptx", is_text, || {
        ptx_with(k, p, sampling).map(String::into_bytes)
    })?;
    // (Generated PTX is text; a damaged entry was passed by.)
    String::from_utf8(text).or_else(|_| ptx_with(k, p, sampling))
}

/// The bytes stored under `key` (a file with the extension `ext`) if they are `valid`,
/// else those `make` gives, then stored (over a damaged entry).
pub(crate) fn cached<E>(
    key: &str,
    ext: &str,
    valid: impl Fn(&[u8]) -> bool,
    make: impl FnOnce() -> Result<Vec<u8>, E>,
) -> Result<Vec<u8>, E> {
    let Some(dir) = cache_dir() else {
        return make();
    };
    let path = dir.join(format!("{}.{ext}", entry_name(key)));
    if let Ok(bytes) = std::fs::read(&path) {
        if valid(&bytes) {
            return Ok(bytes);
        }
    }
    let bytes = make()?;
    store(&dir, &path, &bytes);
    Ok(bytes)
}

/// The cache's directory, or `None` when it is off or no place for it is known.
fn cache_dir() -> Option<PathBuf> {
    if std::env::var("STENCIL_CACHE").is_ok_and(|v| v == "off" || v == "0") {
        return None;
    }
    let target = match (
        std::env::var_os("STENCIL_CACHE_DIR"),
        std::env::var_os("CARGO_TARGET_DIR"),
    ) {
        (Some(dir), _) => return Some(PathBuf::from(dir)),
        (None, Some(target)) => PathBuf::from(target),
        (None, None) => {
            let manifest = PathBuf::from(std::env::var_os("CARGO_MANIFEST_DIR")?);
            let root = manifest
                .ancestors()
                .find(|d| d.join("Cargo.lock").is_file())?;
            root.join("target")
        }
    };
    Some(target.join("stencil-cache"))
}

/// A file name for `key`: two 64-bit FNV-1a hashes of different offsets, in hex.
fn entry_name(key: &str) -> String {
    let fnv = |mut h: u64| {
        for b in key.bytes() {
            h ^= b as u64;
            h = h.wrapping_mul(0x0000_0100_0000_01b3);
        }
        h
    };
    format!(
        "{:016x}{:016x}",
        fnv(0xcbf2_9ce4_8422_2325),
        fnv(0x6c62_272e_07bb_0142)
    )
}

/// Writes an entry atomically (a temporary file renamed into place, so that a reader in
/// another rustc never sees half of it); failures leave the cache without the entry.
fn store(dir: &std::path::Path, path: &std::path::Path, bytes: &[u8]) {
    if std::fs::create_dir_all(dir).is_err() {
        return;
    }
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.subsec_nanos());
    let tmp = path.with_extension(format!("tmp{}-{nanos}", std::process::id()));
    if std::fs::write(&tmp, bytes).is_ok() && std::fs::rename(&tmp, path).is_err() {
        let _ = std::fs::remove_file(&tmp);
    }
}

#[cfg(all(test, feature = "llvm"))]
mod tests {
    use super::*;

    #[test]
    fn entries_differ_with_the_key_and_hold_the_generated_ptx() {
        assert_ne!(entry_name("a"), entry_name("b"));
        assert_eq!(entry_name("a").len(), 32);
        let kernels = crate::compile::compile_text(
            "#[stencil]\nfn copy<T: Real>(u: In<T>, out: Out<T>) { out = u[(1, 0)]; }",
        )
        .unwrap();
        let dir = std::env::temp_dir().join(format!("stencil-cache-test-{}", std::process::id()));
        std::env::set_var("STENCIL_CACHE_DIR", &dir);
        let first = cached_ptx(&kernels[0], Precision::F32, Sampling::Software).unwrap();
        // (Other tests may store SASS entries in the same folder meanwhile.)
        let stored: Vec<_> = std::fs::read_dir(&dir)
            .unwrap()
            .flatten()
            .filter(|e| e.path().extension().is_some_and(|x| x == "ptx"))
            .collect();
        assert_eq!(stored.len(), 1, "one entry written");
        let again = cached_ptx(&kernels[0], Precision::F32, Sampling::Software).unwrap();
        assert_eq!(first, again);
        assert_eq!(
            first,
            ptx_with(&kernels[0], Precision::F32, Sampling::Software).unwrap()
        );
        let _ = std::fs::remove_dir_all(&dir);
    }
}
