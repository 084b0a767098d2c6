//! Which points of a rank's blocks may be computed while the ghosts travel
//! ([`RankLayout::overlap_regions`]): with blocks so large that a rank holds few of them
//! (one 8192 x 8192 block per device, say), waiting for whole blocks next to a ghost
//! would leave nothing to hide the messages behind. A block next to a ghost is cut
//! instead into a *core*, whose points read no halo point on the sides facing ghosts,
//! computed meanwhile, and strips along those sides, computed once the ghosts are in.

use crate::RankLayout;
use stencil_runtime::blocks::Geometry;
use stencil_runtime::{BlockKey, BlockRegion, Error};

/// The directions (-1, 0 or 1 per axis; 0 on unused axes) in which block `n`'s points,
/// or their images across periodic axes, lie from block `k`'s within the halo's width.
pub(crate) fn directions(
    geometry: &Geometry,
    k: BlockKey,
    n: BlockKey,
    periodic: [bool; 3],
) -> Vec<[i8; 3]> {
    let g = geometry;
    let h = g.halo as i64;
    // Per axis, the sides of `k` on which an image of `n` lies within reach.
    let per_axis: Vec<Vec<i8>> = (0..3)
        .map(|a| {
            if a >= g.dims {
                return vec![0];
            }
            let (d, b) = (g.domain[a] as i64, g.block[a] as i64);
            let span = |key: BlockKey| {
                let o = key.index[a] as i64 * b;
                (o, (o + b).min(d))
            };
            let ((lo_k, hi_k), (lo_n, hi_n)) = (span(k), span(n));
            let images: &[i64] = if periodic[a] { &[-d, 0, d] } else { &[0] };
            let mut sides: Vec<i8> = images
                .iter()
                .filter(|&&s| lo_n + s - h < hi_k && hi_n + s + h > lo_k)
                .map(|&s| {
                    if hi_n + s <= lo_k {
                        -1
                    } else if lo_n + s >= hi_k {
                        1
                    } else {
                        0
                    }
                })
                .collect();
            sides.sort();
            sides.dedup();
            sides
        })
        .collect();
    let mut out = Vec::new();
    for &x in &per_axis[0] {
        for &y in &per_axis[1] {
            for &z in &per_axis[2] {
                if [x, y, z] != [0; 3] {
                    out.push([x, y, z]);
                }
            }
        }
    }
    out
}

impl RankLayout {
    /// This rank's blocks of a grid of `geometry` as regions in two parts: those whose
    /// points may be computed while the ghosts travel (the inner blocks whole, and the
    /// core of each block next to a ghost), and the others (strips `margin[a]` points
    /// wide along axis `a` on each side of such a block that faces a ghost), computed
    /// after. The points of both parts are the rank's points, each once; no point of the
    /// first part is within `margin` of a side facing a ghost, so with `margin` at least
    /// the grid's halo, no first-part point reads a halo point filled from a ghost. A
    /// ghost across a corner only marks the side of its highest axis whose strip covers
    /// the corner. A block too small to keep a core is left whole in the second part.
    ///
    /// Launch each part's regions with [`stencil_runtime::BlockList::grouped`]; the
    /// strips of the highest axis take the block's whole extent along the others, so
    /// blocks cut alike give few lists.
    pub fn overlap_regions(
        &self,
        geometry: &Geometry,
        margin: [usize; 3],
    ) -> Result<[Vec<BlockRegion>; 2], Error> {
        let g = geometry;
        if (0..g.dims).any(|a| margin[a] < g.halo) {
            return Err(Error::InvalidField(format!(
                "overlap margins {:?} are narrower than the grid's halo of {}: a core point would read a ghost's halo; use margins at least as wide as the halo",
                &margin[..g.dims],
                g.halo
            )));
        }
        let mut parts = [Vec::new(), Vec::new()];
        parts[0].extend(
            self.inner()
                .into_iter()
                .map(|k| BlockRegion::whole(k, g.block)),
        );
        for &key in self.outer() {
            let marked = sides_facing_ghosts(g.dims, self.toward_ghosts(key));
            let origin = g.origin(key);
            let inside = [0, 1, 2].map(|a| g.block[a].min(g.domain[a].max(1) - origin[a]));
            match cut(g, key, margin, marked, inside) {
                Some((core, strips)) => {
                    parts[0].push(core);
                    parts[1].extend(strips);
                }
                None => parts[1].push(BlockRegion::whole(key, g.block)),
            }
        }
        Ok(parts)
    }
}

/// Per axis, whether the low and the high side of a block face a ghost, from the
/// directions in which its ghosts lie: a side ghost marks its side; a ghost across a
/// corner whose sides are all unmarked marks the side of its highest axis.
fn sides_facing_ghosts(dims: usize, toward: impl Iterator<Item = [i8; 3]>) -> [[bool; 2]; 3] {
    let toward: Vec<[i8; 3]> = toward.collect();
    let side = |d: i8| usize::from(d > 0);
    let mut marked = [[false; 2]; 3];
    let axes = |d: &[i8; 3]| (0..dims).filter(|&a| d[a] != 0).collect::<Vec<usize>>();
    for d in toward.iter().filter(|d| axes(d).len() == 1) {
        let a = axes(d)[0];
        marked[a][side(d[a])] = true;
    }
    for d in toward.iter().filter(|d| axes(d).len() > 1) {
        let on = axes(d);
        if !on.iter().any(|&a| marked[a][side(d[a])]) {
            let a = *on.last().expect("a corner has axes");
            marked[a][side(d[a])] = true;
        }
    }
    marked
}

/// A block of `g` with `inside` of its points inside the domain along each axis, cut
/// into its core and the strips along the `marked` sides (the highest axis' strips first,
/// each spanning what is left of the block; a high side's strip starts at the multiple of
/// `margin` at least `margin` points before the domain's end and runs to the block's), as
/// regions of block `key`; `None` where the margins leave no core.
fn cut(
    g: &Geometry,
    key: BlockKey,
    margin: [usize; 3],
    marked: [[bool; 2]; 3],
    inside: [usize; 3],
) -> Option<(BlockRegion, Vec<BlockRegion>)> {
    let (mut lo, mut hi) = ([0usize; 3], g.block);
    // Where the block's points end: the domain's end, or the block's.
    let mut last = inside;
    let mut strips = Vec::new();
    for a in (0..g.dims).rev() {
        for (s, &on) in marked[a].iter().enumerate() {
            if !on {
                continue;
            }
            if last[a] <= lo[a] + margin[a] {
                return None;
            }
            let (mut start, mut end) = (lo, hi);
            if s == 0 {
                end[a] = lo[a] + margin[a];
                lo[a] = end[a];
            } else {
                // At a multiple of the margin, so that a block that runs past the domain's
                // end still gives regions of whole launch tiles.
                start[a] = (last[a] - margin[a]) / margin[a] * margin[a];
                if start[a] <= lo[a] {
                    return None;
                }
                hi[a] = start[a];
                last[a] = start[a];
            }
            strips.push(BlockRegion {
                key,
                start,
                extent: [0, 1, 2].map(|i| end[i] - start[i]),
            });
        }
    }
    let core = BlockRegion {
        key,
        start: lo,
        extent: [0, 1, 2].map(|i| hi[i] - lo[i]),
    };
    Some((core, strips))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashMap;

    /// Every point of a rank's blocks is in exactly one region; no point of the first
    /// part is within the margin of a point of another rank's block (or its periodic
    /// image); the inner blocks are whole in the first part.
    #[test]
    fn regions_cover_the_blocks_once_and_cores_keep_clear_of_ghosts() {
        for (domain, block, ranks, periodic, margin) in [
            (vec![256, 128], vec![64, 32], 3, [false; 3], [8, 4, 1]),
            (
                vec![256, 128],
                vec![64, 32],
                2,
                [true, true, false],
                [16, 2, 1],
            ),
            (
                vec![200, 100],
                vec![64, 32],
                4,
                [true, false, false],
                [8, 8, 1],
            ),
            // The last blocks along y hold 36 of 64 rows: a high strip there starts at a
            // multiple of the margin (24) and runs to the block's end, and a core is left.
            (
                vec![200, 100],
                vec![64, 64],
                2,
                [false, true, false],
                [8, 8, 1],
            ),
            (
                vec![64, 48, 32],
                vec![16, 16, 8],
                3,
                [true, false, true],
                [4, 4, 2],
            ),
        ] {
            let g = Geometry::new(&domain, &block, 2).expect("a geometry");
            let keys: Vec<BlockKey> = g.all_keys().collect();
            let owners = crate::partition(&keys, &vec![1.0; keys.len()], ranks);
            let owner: HashMap<BlockKey, usize> =
                keys.iter().copied().zip(owners.iter().copied()).collect();
            let d = g.domain.map(|v| v as i64);
            let owner_at = |p: [i64; 3]| -> Option<usize> {
                let mut q = [0usize; 3];
                for a in 0..3 {
                    let v = if a < g.dims && periodic[a] {
                        p[a].rem_euclid(d[a])
                    } else {
                        p[a]
                    };
                    if v < 0 || v >= d[a].max(1) {
                        return None;
                    }
                    q[a] = v as usize;
                }
                owner.get(&g.key_of(q)).copied()
            };
            for rank in 0..ranks {
                let layout = RankLayout::with_periodic(&g, &keys, &owners, rank, periodic);
                let [before, after] = layout.overlap_regions(&g, margin).expect("regions");
                let mut seen: HashMap<[usize; 3], usize> = HashMap::new();
                for (part, regions) in [(0, &before), (1, &after)] {
                    for r in regions {
                        let o = g.origin(r.key);
                        for z in 0..r.extent[2] {
                            for y in 0..r.extent[1] {
                                for x in 0..r.extent[0] {
                                    let p = [x, y, z];
                                    let q = [0, 1, 2].map(|a| o[a] + r.start[a] + p[a]);
                                    *seen.entry(q).or_default() += 1;
                                    if part == 1 {
                                        continue;
                                    }
                                    // Within the halo's reach, no other rank's point.
                                    let h = g.halo as i64;
                                    let reach = |a: usize| if a < g.dims { -h..=h } else { 0..=0 };
                                    for dz in reach(2) {
                                        for dy in reach(1) {
                                            for dx in reach(0) {
                                                let n = [
                                                    q[0] as i64 + dx,
                                                    q[1] as i64 + dy,
                                                    q[2] as i64 + dz,
                                                ];
                                                if let Some(o) = owner_at(n) {
                                                    assert_eq!(o, rank, "{domain:?} rank {rank}: core point {q:?} reads {n:?}");
                                                }
                                            }
                                        }
                                    }
                                }
                            }
                        }
                    }
                }
                let mine: usize = layout.owned().len() * g.block.iter().product::<usize>();
                assert_eq!(seen.len(), mine, "{domain:?} rank {rank}: every point");
                assert!(
                    seen.values().all(|&c| c == 1),
                    "{domain:?} rank {rank}: once"
                );
                for k in layout.inner() {
                    assert!(before.contains(&BlockRegion::whole(k, g.block)));
                }
                assert!(!after.is_empty(), "{domain:?} rank {rank}: strips");
            }
        }
    }

    #[test]
    fn one_block_per_rank_keeps_one_strip_and_margins_below_the_halo_are_refused() {
        let g = Geometry::new(&[1024, 512], &[512, 512], 2).expect("a geometry");
        let keys: Vec<BlockKey> = g.all_keys().collect();
        let layout = RankLayout::new(&g, &keys, &[0, 1], 0);
        let [before, after] = layout.overlap_regions(&g, [128, 8, 1]).expect("regions");
        assert_eq!(before.len(), 1);
        assert_eq!((before[0].start, before[0].extent), ([0; 3], [384, 512, 1]));
        assert_eq!(after.len(), 1);
        assert_eq!(
            (after[0].start, after[0].extent),
            ([384, 0, 0], [128, 512, 1])
        );
        let e = layout.overlap_regions(&g, [1, 8, 1]).unwrap_err();
        assert!(e.to_string().contains("halo"), "{e}");
        // A block holding 36 of its 64 rows inside the domain, its high y side facing a
        // ghost: the strip starts at 24, the multiple of the margin at least 8 rows before
        // the domain's end, and runs to the block's end; the core keeps rows 0 to 23.
        let g = Geometry::new(&[64, 100], &[64, 64], 2).expect("a geometry");
        let marked = [[false; 2], [false, true], [false; 2]];
        let (core, strips) =
            cut(&g, BlockKey::new([0; 3]), [8, 8, 1], marked, [64, 36, 1]).expect("a core");
        assert_eq!((core.start, core.extent), ([0; 3], [64, 24, 1]));
        assert_eq!(strips.len(), 1);
        assert_eq!(
            (strips[0].start, strips[0].extent),
            ([0, 24, 0], [64, 40, 1])
        );
        // 12 rows inside: no multiple of 8 at least 8 rows before the end leaves a core.
        assert!(cut(&g, BlockKey::new([0; 3]), [8, 8, 1], marked, [64, 12, 1]).is_none());
    }
}
