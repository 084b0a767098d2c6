//! A picture of a mesh: each triangle filled with its quality (red 0 to green 1), on
//! white, y up.

use crate::mesh::barycentric;
use crate::{Mesh, MeshError};
use image::{Rgb, RgbImage};
use std::path::Path;

/// A picture of one value per element: `width` x `height` values, row by row from the
/// bottom (the smallest y), NaN where no element covers a pixel's centre.
pub struct Raster {
    /// Columns.
    pub width: usize,
    /// Rows.
    pub height: usize,
    /// The values.
    pub values: Vec<f32>,
}

/// Rasterises `per_element` over `mesh`'s bounding box, its larger side `across` pixels;
/// with `edges`, also a second raster with 1 on the elements' edges (0 elsewhere).
pub fn raster(
    mesh: &Mesh,
    per_element: &[f64],
    across: usize,
    edges: bool,
) -> (Raster, Option<Raster>) {
    let across = across.max(2);
    let (lo, hi) = mesh.bounds();
    let span = (hi[0] - lo[0]).max(hi[1] - lo[1]).max(1e-300);
    let scale = (across - 1) as f64 / span;
    let width = (((hi[0] - lo[0]) * scale) as usize + 1).max(1);
    let height = (((hi[1] - lo[1]) * scale) as usize + 1).max(1);
    let mut values = vec![f32::NAN; width * height];
    let mut lines = edges.then(|| vec![0.0f32; width * height]);
    let to_px = |p: [f64; 2]| [(p[0] - lo[0]) * scale, (p[1] - lo[1]) * scale];
    for (k, t) in mesh.triangles.iter().enumerate() {
        let v = t.map(|i| to_px(mesh.points[i]));
        let low = |a: usize| {
            v.iter()
                .map(|p| p[a])
                .fold(f64::INFINITY, f64::min)
                .floor()
                .max(0.0) as usize
        };
        let high = |a: usize, n: usize| {
            v.iter()
                .map(|p| p[a])
                .fold(0.0, f64::max)
                .ceil()
                .min((n - 1) as f64) as usize
        };
        let (x0, x1, y0, y1) = (low(0), high(0, width), low(1), high(1, height));
        for y in y0..=y1 {
            for x in x0..=x1 {
                let (_, outside) = barycentric(v, [x as f64 + 0.5, y as f64 + 0.5]);
                if outside <= 0.0 {
                    values[x + y * width] = per_element[k] as f32;
                }
            }
        }
        if let Some(lines) = &mut lines {
            for e in 0..3 {
                let (a, b) = (v[e], v[(e + 1) % 3]);
                let steps = ((b[0] - a[0]).abs().max((b[1] - a[1]).abs()).ceil() as usize).max(1);
                for s in 0..=steps {
                    let f = s as f64 / steps as f64;
                    let (x, y) = (a[0] + f * (b[0] - a[0]), a[1] + f * (b[1] - a[1]));
                    let (x, y) = (x.round() as usize, y.round() as usize);
                    if x < width && y < height {
                        lines[x + y * width] = 1.0;
                    }
                }
            }
        }
    }
    let lines = lines.map(|values| Raster {
        width,
        height,
        values,
    });
    (
        Raster {
            width,
            height,
            values,
        },
        lines,
    )
}

/// Renders `mesh` with `quality` per element at `width` pixels across its bounding box.
pub fn render(mesh: &Mesh, quality: &[f64], width: u32) -> RgbImage {
    let (r, _) = raster(mesh, quality, width as usize, false);
    let mut img = RgbImage::from_pixel(r.width as u32, r.height as u32, Rgb([255, 255, 255]));
    for y in 0..r.height {
        for x in 0..r.width {
            let q = r.values[x + y * r.width];
            if !q.is_nan() {
                let c = colorous::RED_YELLOW_GREEN.eval_continuous(f64::from(q).clamp(0.0, 1.0));
                img.put_pixel(x as u32, (r.height - 1 - y) as u32, Rgb([c.r, c.g, c.b]));
            }
        }
    }
    img
}

/// Writes the picture of `mesh` coloured by `quality` as a PNG.
pub fn write_png(mesh: &Mesh, quality: &[f64], width: u32, path: &Path) -> Result<(), MeshError> {
    render(mesh, quality, width)
        .save(path)
        .map_err(|e| MeshError::Input {
            file: path.display().to_string(),
            message: format!("cannot write it: {e}"),
        })
}
