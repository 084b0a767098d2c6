//! What an adaptive run adds to the results: a picture of the leaf blocks by level over
//! the vorticity, and the leaf blocks' points for ParaView.

use super::pictures::{save, vorticity_image, SIDE};
use super::Snapshot;
use crate::adaptive::Hierarchy;
use crate::CavityError;
use std::collections::HashSet;
use std::path::Path;
use stencil_runtime::BlockKey;
use vtkio::model::{
    Attribute, Attributes, ByteOrder, CellType, Cells, DataSet, UnstructuredGridPiece, Version,
    VertexNumbers, Vtk,
};

/// The leaf blocks of `tree` (present, no present child) and the square each covers,
/// `[x0, y0, x1, y1]` in the unit square (clipped to it).
fn leaves(tree: &Hierarchy) -> Vec<(BlockKey, [f64; 4])> {
    let g = *tree.grid().geometry();
    let present: HashSet<BlockKey> = tree.grid().keys().into_iter().collect();
    present
        .iter()
        .filter(|k| !k.children(2).iter().any(|c| present.contains(c)))
        .map(|&k| {
            let lg = g.at_level(k.level);
            let h = tree.spacing(k.level);
            let o = lg.origin(k);
            let end = |a: usize| ((o[a] + lg.block[a]) as f64 * h).min(1.0);
            (k, [o[0] as f64 * h, o[1] as f64 * h, end(0), end(1)])
        })
        .collect()
}

/// The vorticity picture with every leaf block's outline, coloured by its level
/// (level 0 black, then Tableau's ten colours).
pub fn levels_picture(s: &Snapshot, tree: &Hierarchy, path: &Path) -> Result<(), CavityError> {
    let mut image = vorticity_image(s);
    let side = SIDE as f64 - 1.0;
    let pixel = |x: f64| (x * side).round() as u32;
    for (key, [x0, y0, x1, y1]) in leaves(tree) {
        let c = if key.level == 0 {
            colorous::Color { r: 0, g: 0, b: 0 }
        } else {
            colorous::TABLEAU10[(key.level as usize - 1) % 10]
        };
        let colour = image::Rgb([c.r, c.g, c.b]);
        // y up in the domain, down in the picture.
        let (px0, px1) = (pixel(x0), pixel(x1));
        let (py0, py1) = (pixel(1.0 - y1), pixel(1.0 - y0));
        for px in px0..=px1 {
            image.put_pixel(px, py0, colour);
            image.put_pixel(px, py1, colour);
        }
        for py in py0..=py1 {
            image.put_pixel(px0, py, colour);
            image.put_pixel(px1, py, colour);
        }
    }
    save(&image, path)
}

/// The leaf blocks as an unstructured grid: per block, the quadrilaterals between its
/// points at its level's spacing (up to the next block's first points), with the level
/// per cell and `psi` and the vorticity per point (from the snapshot, which is the finest
/// level's uniform grid, so every block's point is one of its nodes).
pub fn write_vtk(s: &Snapshot, tree: &Hierarchy, path: &Path) -> Result<(), CavityError> {
    let g = *tree.grid().geometry();
    let finest = g.levels - 1;
    let n = s.n;
    let (mut points, mut psi, mut w) = (Vec::new(), Vec::new(), Vec::new());
    let (mut connectivity, mut offsets, mut levels) = (Vec::new(), Vec::new(), Vec::new());
    for (key, _) in leaves(tree) {
        let lg = g.at_level(key.level);
        let o = lg.origin(key);
        let stride = 1usize << (finest - key.level);
        // The block's points and the first of the next blocks', inside the domain.
        let count = |a: usize| (lg.block[a] + 1).min(lg.domain[a] - o[a]);
        let (ni, nj) = (count(0), count(1));
        let first = (points.len() / 3) as u64;
        for j in 0..nj {
            for i in 0..ni {
                let (fi, fj) = ((o[0] + i) * stride, (o[1] + j) * stride);
                let h = 1.0 / (n - 1) as f64;
                points.extend([fi as f64 * h, fj as f64 * h, 0.0]);
                psi.push(s.psi[fi + n * fj]);
                w.push(s.w[fi + n * fj]);
            }
        }
        for j in 0..nj.saturating_sub(1) {
            for i in 0..ni.saturating_sub(1) {
                let at = |i: usize, j: usize| first + (i + ni * j) as u64;
                connectivity.extend([at(i, j), at(i + 1, j), at(i + 1, j + 1), at(i, j + 1)]);
                offsets.push(connectivity.len() as u64);
                levels.push(key.level as i32);
            }
        }
    }
    let cells = levels.len();
    let vtk = Vtk {
        version: Version::new((4, 1)),
        title: "lid-driven cavity: the adaptive grid's leaf blocks".into(),
        byte_order: ByteOrder::BigEndian,
        file_path: None,
        data: DataSet::inline(UnstructuredGridPiece {
            points: points.into(),
            cells: Cells {
                cell_verts: VertexNumbers::XML {
                    connectivity,
                    offsets,
                },
                types: vec![CellType::Quad; cells],
            },
            data: Attributes {
                point: vec![
                    Attribute::scalars("psi", 1).with_data(psi),
                    Attribute::scalars("vorticity", 1).with_data(w),
                ],
                cell: vec![Attribute::scalars("level", 1).with_data(levels)],
            },
        }),
    };
    vtk.export(path).map_err(|e| CavityError::Output {
        path: path.into(),
        cause: e.to_string(),
    })
}
