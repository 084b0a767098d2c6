//! Launch-shape tuning: for each kernel, precision, device and grid size class, a few
//! shapes proposed by a model of what wins ([`LaunchShape::proposals`]) are timed in the
//! kernel's first real launches (`trial.rs`), or (`STENCIL_TUNE=search`) every candidate
//! shape in a timed search before the first launch; the winner is kept in memory and in a
//! file, and reused.

use crate::cuda::trial::TimedLaunch;
use crate::cuda::Tiles;
use crate::Error;
use std::collections::HashMap;
use std::io::Write;
use std::path::PathBuf;

/// Environment variable choosing the policy: `on` (default: trials of a few proposed
/// shapes in the first launches), `search` (a timed search of every candidate before the
/// first launch), `off` (a fixed default shape, no search), or a shape such as `32x8x1p4`
/// (always that shape).
pub const TUNE_ENV: &str = "STENCIL_TUNE";
/// Environment variable naming the file that caches tuned shapes (default
/// `$XDG_CACHE_HOME/stencil/launch-shapes.tsv`, else `~/.cache/stencil/launch-shapes.tsv`).
pub const TUNE_CACHE_ENV: &str = "STENCIL_TUNE_CACHE";

/// A launch shape: threads per block along each axis, and the points each thread
/// computes: `vector` consecutive points along axis 0 (moved with 16-byte vector
/// accesses) times `points` along the kernel's last axis.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct LaunchShape {
    /// Threads per block along x, y, z.
    pub block: [u32; 3],
    /// Points per thread along the last axis of the kernel (1 for 1D kernels).
    pub points: u32,
    /// Points per thread along axis 0 (1, or the kernel's vector width).
    pub vector: u32,
}

impl std::fmt::Display for LaunchShape {
    /// `32x8x1p4` (block 32x8x1, 4 points per thread), `32x8x1v4p2` (and vectors of 4).
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let [x, y, z] = self.block;
        let v = if self.vector > 1 {
            format!("v{}", self.vector)
        } else {
            String::new()
        };
        write!(f, "{x}x{y}x{z}{v}p{}", self.points)
    }
}

impl std::str::FromStr for LaunchShape {
    type Err = Error;
    /// Parses `32x8x1p4` (block 32x8x1, 4 points per thread) or `32x8x1v4p4` (and
    /// vectors of 4 along axis 0).
    fn from_str(s: &str) -> Result<Self, Error> {
        let bad = || {
            Error::Backend(format!(
                "`{s}` is not a launch shape; write it as BXxBYxBZ[vV]pP, e.g. 32x8x1p4 or 32x8x1v4p2"
            ))
        };
        let (block, points) = s.trim().split_once('p').ok_or_else(bad)?;
        let (block, vector) = match block.split_once('v') {
            Some((b, v)) => (b, v.parse::<u32>().map_err(|_| bad())?),
            None => (block, 1),
        };
        let dims: Vec<u32> = block
            .split('x')
            .map(|d| d.parse().map_err(|_| bad()))
            .collect::<Result<_, _>>()?;
        let [x, y, z] = dims[..] else {
            return Err(bad());
        };
        let shape = LaunchShape {
            block: [x, y, z],
            points: points.parse().map_err(|_| bad())?,
            vector,
        };
        let threads = x as u64 * y as u64 * z as u64;
        if threads == 0
            || threads > 1024
            || !matches!(shape.points, 1 | 2 | 4)
            || !matches!(vector, 1 | 2 | 4)
        {
            return Err(Error::Backend(format!(
                "launch shape `{s}`: a block has 1 to 1024 threads, a thread 1, 2 or 4 points (the kernels' tile variants) and vectors of 1, 2 or 4"
            )));
        }
        Ok(shape)
    }
}

impl LaunchShape {
    /// The shape used when tuning is off.
    pub fn default_for(dims: usize) -> LaunchShape {
        let block = match dims {
            1 => [256, 1, 1],
            2 => [32, 8, 1],
            _ => [32, 4, 2],
        };
        LaunchShape {
            block,
            points: 1,
            vector: 1,
        }
    }

    /// The shapes of `rules` (a block and the points per thread), with vectors of `vector`.
    fn of_rules(rules: &[([u32; 3], u32)], vector: u32) -> impl Iterator<Item = LaunchShape> + '_ {
        rules.iter().map(move |&(block, points)| LaunchShape {
            block,
            points,
            vector,
        })
    }

    /// The grid of blocks that covers `n` (extents of axes 0..3) for a kernel of `dims`
    /// dimensions, or `None` if it exceeds the hardware's grid limits.
    pub fn grid(&self, dims: usize, n: [usize; 3]) -> Option<[u32; 3]> {
        let last = dims.max(1) - 1;
        let mut g = [1u32; 3];
        for a in 0..3 {
            let mut per_block = self.block[a] as usize;
            if a == last {
                per_block *= self.points as usize;
            }
            if a == 0 {
                per_block *= self.vector as usize;
            }
            let blocks = n[a].div_ceil(per_block);
            let limit = if a == 0 { (1 << 31) - 1 } else { 65535 };
            if blocks > limit {
                return None;
            }
            g[a] = blocks as u32;
        }
        Some(g)
    }

    /// The shapes a search tries for a kernel of `dims` dimensions whose PTX has the entries
    /// `tiles`, where vectors of `vector` may be used (1: none).
    pub fn candidates(dims: usize, tiles: Tiles, vector: u32) -> Vec<LaunchShape> {
        let blocks: &[[u32; 3]] = match dims {
            1 => &[[128, 1, 1], [256, 1, 1], [512, 1, 1], [1024, 1, 1]],
            2 => &[
                [32, 4, 1],
                [32, 8, 1],
                [32, 16, 1],
                [64, 4, 1],
                [64, 8, 1],
                [128, 2, 1],
                [256, 1, 1],
            ],
            _ => &[
                [32, 4, 1],
                [32, 8, 1],
                [64, 4, 1],
                [128, 2, 1],
                [32, 4, 2],
                [64, 2, 2],
                [32, 2, 4],
            ],
        };
        let scalar = tiles.scalar.iter().map(|&points| (1, points));
        let vectors = tiles.vector.iter().filter(|_| vector > 1);
        let entries: Vec<(u32, u32)> = scalar.chain(vectors.map(|&p| (vector, p))).collect();
        blocks
            .iter()
            .flat_map(|&block| {
                entries.iter().map(move |&(vector, points)| LaunchShape {
                    block,
                    points,
                    vector,
                })
            })
            .collect()
    }
}

impl LaunchShape {
    /// The most shapes [`LaunchShape::proposals`] gives.
    pub const MOST_PROPOSALS: usize = 4;

    /// The most launches a kernel's trial of the proposals takes ([`Tuning::On`]).
    pub const MOST_TRIAL_LAUNCHES: usize = Self::MOST_PROPOSALS * crate::cuda::trial::ROUNDS;

    /// The shapes worth timing for a kernel with staged values (entries without vectors
    /// of 1, 2 or 4 points per thread): tiles taller than the others' proposals, since
    /// each block also computes its stages over a box around its tile, which costs less
    /// the more points the tile has per point of its edge.
    pub fn staged_proposals(dims: usize) -> Vec<LaunchShape> {
        let rules: &[([u32; 3], u32)] = match dims {
            0 | 1 => &[([256, 1, 1], 1), ([512, 1, 1], 1), ([128, 1, 1], 1)],
            2 => &[
                ([32, 8, 1], 2),
                ([32, 4, 1], 4),
                ([64, 4, 1], 2),
                ([32, 8, 1], 1),
            ],
            _ => &[
                ([32, 4, 2], 2),
                ([32, 4, 1], 4),
                ([32, 8, 2], 1),
                ([32, 4, 2], 1),
            ],
        };
        Self::of_rules(rules, 1).collect()
    }

    /// The few shapes worth timing for a kernel of `dims` dimensions with the entries
    /// `tiles`, where vectors of `vector` may be used (1: none), the
    /// model's first choice first; `small` when the domain has fewer points than the
    /// device holds threads.
    ///
    /// The rules come from the shapes the full search ([`Tuning::Search`]) chose on an
    /// H200 and an H100 for the suite's stencils, the shallow-water and the multigrid
    /// kernels (`benchmarks/results/h100-first-launches.md`): on large domains vectors
    /// (nearly) always won; in 2D blocks of 128 to 256 threads of one point each, some
    /// kernels 2 points along y, and the multigrid kernels 32 x 4 threads of 4 points; in
    /// 3D blocks of 32 x 4 with 2 or 4 points along z. The first proposal, which the first
    /// launch loads, is the one of the smaller code where two are close (the driver's JIT
    /// takes longer the more points a thread computes).
    /// Fields not aligned to the vectors leave a kernel with vector entries only its entry
    /// of one point without vectors (`kernels_gen::llvm::tile_variants`): in 3D, where no
    /// rule has one point, such a launch gets no proposal and runs the default shape.
    /// A domain too small to fill the device runs one point per thread: more points only
    /// lengthen a launch's critical path (which back-to-back timing hides and a chain of
    /// dependent launches does not).
    pub fn proposals(dims: usize, tiles: Tiles, vector: u32, small: bool) -> Vec<LaunchShape> {
        let vector = if tiles.vector.is_empty() { 1 } else { vector };
        let (v, rules): (u32, &[([u32; 3], u32)]) = match (dims, small) {
            (0 | 1, _) => (1, &[([256, 1, 1], 1), ([512, 1, 1], 1), ([128, 1, 1], 1)]),
            (2, true) => (1, &[([32, 4, 1], 1), ([64, 4, 1], 1), ([32, 8, 1], 1)]),
            (2, false) => (
                vector,
                &[
                    ([64, 4, 1], 1),
                    ([32, 4, 1], 4),
                    ([32, 4, 1], 1),
                    ([64, 4, 1], 2),
                ],
            ),
            (_, true) => (1, &[([32, 4, 1], 1), ([32, 8, 1], 1), ([32, 4, 2], 1)]),
            (_, false) => (
                vector,
                &[
                    ([32, 4, 1], 2),
                    ([32, 4, 1], 4),
                    ([64, 4, 1], 4),
                    ([32, 4, 2], 2),
                ],
            ),
        };
        Self::of_rules(rules, v)
            .filter(|s| tiles.has(v > 1, s.points))
            .collect()
    }
}

/// How [`crate::Backend::Cuda`] chooses launch shapes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Tuning {
    /// Once per kernel, precision, device and size class: the first launches try the few
    /// shapes [`LaunchShape::proposals`] gives, each timed twice; the fastest is cached.
    /// The first launch uses the model's first choice and loads only that variant.
    On,
    /// Once per kernel, precision, device and size class: before the first launch, time
    /// every candidate of [`LaunchShape::candidates`] (several launches each; kernels
    /// that update a field in place are tuned as with `On`); cache the winner.
    Search,
    /// Always the default shape of [`LaunchShape::default_for`].
    Off,
    /// Always this shape (where the grid allows it; otherwise the default).
    Fixed(LaunchShape),
}

impl Tuning {
    /// The policy named by `STENCIL_TUNE` (`on` when unset).
    pub fn from_env() -> Result<Tuning, Error> {
        match std::env::var(TUNE_ENV) {
            Err(_) => Ok(Tuning::On),
            Ok(v) => match v.trim().to_ascii_lowercase().as_str() {
                "" | "on" | "1" | "true" => Ok(Tuning::On),
                "search" => Ok(Tuning::Search),
                "off" | "0" | "false" => Ok(Tuning::Off),
                shape => shape.parse().map(Tuning::Fixed).map_err(|e| {
                    Error::Backend(format!("{TUNE_ENV}: {e}; or use `on`, `search` or `off`"))
                }),
            },
        }
    }
}

/// What identifies a tuning result.
pub(crate) fn cache_key(ptx_hash: u64, precision: &str, device: &str, n: [usize; 3]) -> String {
    let h = ptx_hash;
    // Size class: the power of two at or above each extent.
    let class: Vec<String> = n
        .iter()
        .map(|&x| (usize::BITS - x.saturating_sub(1).leading_zeros()).to_string())
        .collect();
    format!("{h:016x} {precision} {device} 2^{}", class.join("x2^"))
}

/// Tuned shapes of one device: in memory, backed by a tab-separated file (re-read when
/// `STENCIL_TUNE_CACHE` names another file). Lines `key <TAB> shape` hold decisions;
/// lines `key <TAB> trial shape seconds` hold the timed launches of a trial that its
/// process did not finish (a kernel launched fewer times than a trial takes), which the
/// next process's trial of that key goes on from, so that every trial ends in some run.
#[derive(Default)]
pub(crate) struct TuneCache {
    loaded: Option<Option<PathBuf>>,
    path: Option<PathBuf>,
    shapes: HashMap<String, LaunchShape>,
    samples: HashMap<String, Vec<(LaunchShape, f64)>>,
}

/// A trial's timed launch as a cache line's value: `trial SHAPE SECONDS`.
fn parse_sample(value: &str) -> Option<(LaunchShape, f64)> {
    let mut words = value.strip_prefix("trial ")?.split_whitespace();
    let shape = words.next()?.parse().ok()?;
    let seconds: f64 = words.next()?.parse().ok()?;
    (seconds.is_finite() && seconds >= 0.0 && words.next().is_none()).then_some((shape, seconds))
}

fn cache_path() -> Option<PathBuf> {
    if let Ok(p) = std::env::var(TUNE_CACHE_ENV) {
        return Some(PathBuf::from(p));
    }
    let base = std::env::var_os("XDG_CACHE_HOME")
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".cache")))?;
    Some(base.join("stencil").join("launch-shapes.tsv"))
}

impl TuneCache {
    fn load(&mut self) {
        let path = cache_path();
        if self.loaded.as_ref() == Some(&path) {
            return;
        }
        self.loaded = Some(path.clone());
        self.shapes.clear();
        self.samples.clear();
        self.path = path;
        let Some(text) = self
            .path
            .as_ref()
            .and_then(|p| std::fs::read_to_string(p).ok())
        else {
            return;
        };
        self.read(&text);
    }

    /// Takes in the lines of a cache file: `key <TAB> shape`, or `key <TAB> trial shape
    /// seconds` (kept only for keys without a decision). Unreadable lines (an older
    /// format) are skipped.
    fn read(&mut self, text: &str) {
        for line in text.lines() {
            if let Some((key, value)) = line.split_once('\t') {
                if let Ok(s) = value.parse::<LaunchShape>() {
                    self.shapes.insert(key.to_string(), s);
                } else if let Some(sample) = parse_sample(value) {
                    self.samples
                        .entry(key.to_string())
                        .or_default()
                        .push(sample);
                }
            }
        }
        let shapes = &self.shapes;
        self.samples.retain(|key, _| !shapes.contains_key(key));
    }

    /// The timed launches earlier processes recorded for the unfinished trial of `key`.
    pub fn samples(&mut self, key: &str) -> Vec<(LaunchShape, f64)> {
        self.load();
        self.samples.get(key).cloned().unwrap_or_default()
    }

    /// Records timed launches of unfinished trials in the file, for the next process's
    /// trials of their keys.
    pub fn put_samples(&mut self, timed: Vec<TimedLaunch>) {
        if timed.is_empty() {
            return;
        }
        self.load();
        for (key, shape, seconds) in timed {
            self.append(&format!("{key}\ttrial {shape} {seconds:e}"));
            self.samples.entry(key).or_default().push((shape, seconds));
        }
    }

    /// The cached shape for `key`.
    pub fn get(&mut self, key: &str) -> Option<LaunchShape> {
        // A hit needs no look at the environment or the file: launches take this path.
        if let Some(&s) = self.shapes.get(key) {
            return Some(s);
        }
        self.load();
        self.shapes.get(key).copied()
    }

    /// Records a shape chosen from an unfinished trial, for this process only.
    pub fn put_in_memory(&mut self, key: String, shape: LaunchShape) {
        self.shapes.insert(key, shape);
    }

    /// Records a tuned shape, appending it to the file (best effort: a cache that cannot be
    /// written only costs a new search in the next process, so it is reported, not fatal).
    pub fn put(&mut self, key: String, shape: LaunchShape) {
        self.load();
        self.append(&format!("{key}\t{shape}"));
        self.samples.remove(&key);
        self.shapes.insert(key, shape);
    }

    /// Appends `line` to the file (best effort, as [`TuneCache::put`] says).
    fn append(&mut self, line: &str) {
        let Some(path) = &self.path else {
            return;
        };
        let written = path
            .parent()
            .map_or(Ok(()), std::fs::create_dir_all)
            .and_then(|_| {
                std::fs::OpenOptions::new()
                    .create(true)
                    .append(true)
                    .open(path)
            })
            .and_then(|mut f| writeln!(f, "{line}"));
        if let Err(e) = written {
            eprintln!(
                "stencil-runtime: could not write the launch-shape cache {} ({e}); set {TUNE_CACHE_ENV} to a writable file",
                path.display()
            );
            self.path = None;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shapes_parse_and_print() {
        let s: LaunchShape = "32x8x1p4".parse().unwrap();
        assert_eq!(s.block, [32, 8, 1]);
        assert_eq!(s.points, 4);
        assert_eq!(s.to_string(), "32x8x1p4");
        let v: LaunchShape = "32x8x1v4p2".parse().unwrap();
        assert_eq!((v.vector, v.points), (4, 2));
        assert_eq!(v.to_string(), "32x8x1v4p2");
        assert!("32x8p4".parse::<LaunchShape>().is_err());
        assert!("64x32x1p1".parse::<LaunchShape>().is_err(), "2048 threads");
        for no_such_variant in ["32x8x1p3", "32x4x1v4p8"] {
            assert!(no_such_variant.parse::<LaunchShape>().is_err());
        }
    }

    #[test]
    fn trial_lines_parse_and_others_are_skipped() {
        let shape: LaunchShape = "32x4x1v4p2".parse().unwrap();
        assert_eq!(
            parse_sample("trial 32x4x1v4p2 1.25e-4"),
            Some((shape, 1.25e-4))
        );
        assert_eq!(
            parse_sample(&format!("trial {shape} {:e}", 3.5e-5)),
            Some((shape, 3.5e-5))
        );
        for bad in [
            "32x4x1v4p2",
            "trial 32x4x1v4p2",
            "trial 32x4x1v4p2 -1",
            "trial 32x4x1v4p2 NaN",
            "trial 32x4x1v4p2 1e-4 more",
            "trial 32x4p2 1e-4",
        ] {
            assert_eq!(parse_sample(bad), None, "{bad}");
        }
    }

    #[test]
    fn samples_are_kept_for_undecided_trials_only() {
        let (a, b): (LaunchShape, LaunchShape) =
            ("32x4x1v4p1".parse().unwrap(), "64x4x1v4p1".parse().unwrap());
        let mut cache = TuneCache::default();
        cache.read(&format!(
            "open\ttrial {a} 2e-4\nopen\ttrial {b} 1e-4\nopen\tgarbage\n\
             done\ttrial {a} 3e-4\ndone\t{b}\n"
        ));
        assert_eq!(cache.samples.get("open"), Some(&vec![(a, 2e-4), (b, 1e-4)]));
        assert_eq!(
            cache.samples.get("done"),
            None,
            "a decided trial's samples go"
        );
        assert_eq!(cache.shapes.get("done"), Some(&b));
    }

    #[test]
    fn grids_cover_the_domain() {
        let s = LaunchShape {
            block: [32, 8, 1],
            points: 4,
            vector: 1,
        };
        assert_eq!(s.grid(2, [100, 70, 1]), Some([4, 3, 1]));
        let v = LaunchShape { vector: 4, ..s };
        assert_eq!(v.grid(2, [100, 70, 1]), Some([1, 3, 1]));
        let s3 = LaunchShape {
            block: [32, 4, 2],
            points: 2,
            vector: 1,
        };
        assert_eq!(s3.grid(3, [64, 9, 9]), Some([2, 3, 3]));
        let tall = LaunchShape {
            block: [32, 1, 1],
            points: 1,
            vector: 1,
        };
        assert_eq!(tall.grid(2, [32, 70000, 1]), None);
    }

    #[test]
    fn proposals_follow_the_model() {
        let shapes = |dims, tiles: Tiles, vector, small| -> Vec<String> {
            LaunchShape::proposals(dims, tiles, vector, small)
                .iter()
                .map(|s| s.to_string())
                .collect()
        };
        // The entries of a kernel with vectors, and of one without (integer fields).
        let vectors = Tiles {
            scalar: &[1],
            vector: &[1, 2, 4],
        };
        let scalar = Tiles {
            scalar: &[1, 2, 4],
            vector: &[],
        };
        // Large 2D domains: the widest vectors, 64 x 4 of one point first.
        assert_eq!(
            shapes(2, vectors, 4, false),
            ["64x4x1v4p1", "32x4x1v4p4", "32x4x1v4p1", "64x4x1v4p2"]
        );
        // Without vector entries, the same blocks without them.
        assert_eq!(
            shapes(2, scalar, 1, false),
            ["64x4x1p1", "32x4x1p4", "32x4x1p1", "64x4x1p2"]
        );
        // Unaligned fields: only the entries without vectors the kernel has.
        assert_eq!(shapes(2, vectors, 1, false), ["64x4x1p1", "32x4x1p1"]);
        // Small domains and 1D kernels: one point per thread, no vectors.
        assert!(shapes(2, vectors, 4, true)
            .iter()
            .all(|s| s.ends_with("x1p1")));
        assert_eq!(shapes(1, Tiles::ONE, 1, false)[0], "256x1x1p1");
        assert_eq!(shapes(3, vectors, 2, false)[0], "32x4x1v2p2");
        for (dims, small) in [(1, false), (2, false), (2, true), (3, false), (3, true)] {
            for tiles in [vectors, scalar] {
                let n = LaunchShape::proposals(dims, tiles, 4, small).len();
                assert!((1..=LaunchShape::MOST_PROPOSALS).contains(&n));
            }
            // A kernel of one entry (a line kernel) may have none: it runs the default.
            let n = LaunchShape::proposals(dims, Tiles::ONE, 1, small).len();
            assert!(n <= LaunchShape::MOST_PROPOSALS);
        }
    }

    #[test]
    fn candidates_are_the_entries_the_kernel_has() {
        let vectors = Tiles {
            scalar: &[1],
            vector: &[1, 2, 4],
        };
        let all = LaunchShape::candidates(2, vectors, 4);
        assert!(all.iter().all(|s| vectors.has(s.vector > 1, s.points)));
        assert_eq!(all.len(), 7 * 4);
        // Unaligned fields: the entries without vectors only.
        assert!(LaunchShape::candidates(2, vectors, 1)
            .iter()
            .all(|s| s.vector == 1 && s.points == 1));
    }

    #[test]
    fn keys_separate_size_classes_and_precisions() {
        let a = cache_key(1, "f32", "GPU", [1000, 1000, 1]);
        assert_eq!(a, cache_key(1, "f32", "GPU", [1024, 600, 1]));
        assert_ne!(a, cache_key(1, "f32", "GPU", [1025, 1000, 1]));
        assert_ne!(a, cache_key(1, "f64", "GPU", [1000, 1000, 1]));
        assert_ne!(a, cache_key(2, "f32", "GPU", [1000, 1000, 1]));
    }
}
