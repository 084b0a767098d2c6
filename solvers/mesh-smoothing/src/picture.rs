//! A picture of a mesh: each triangle filled with its quality (red 0 to green 1), on
//! white, y up.

use crate::mesh::barycentric;
use crate::{Mesh, MeshError};
use image::{Rgb, RgbImage};
use std::path::Path;

/// Renders `mesh` with `quality` per element at `width` pixels across its bounding box.
pub fn render(mesh: &Mesh, quality: &[f64], width: u32) -> RgbImage {
    let (lo, hi) = mesh.bounds();
    let span = (hi[0] - lo[0]).max(hi[1] - lo[1]).max(1e-300);
    let scale = (width - 1) as f64 / span;
    let height = (((hi[1] - lo[1]) * scale) as u32 + 1).max(1);
    let mut img = RgbImage::from_pixel(width, height, Rgb([255, 255, 255]));
    let to_px = |p: [f64; 2]| [(p[0] - lo[0]) * scale, (hi[1] - p[1]) * scale];
    for (k, t) in mesh.triangles.iter().enumerate() {
        let c = colorous::RED_YELLOW_GREEN.eval_continuous(quality[k].clamp(0.0, 1.0));
        let v = t.map(|i| to_px(mesh.points[i]));
        let x0 = v
            .iter()
            .map(|p| p[0])
            .fold(f64::INFINITY, f64::min)
            .floor()
            .max(0.0) as u32;
        let x1 = v
            .iter()
            .map(|p| p[0])
            .fold(0.0, f64::max)
            .ceil()
            .min((width - 1) as f64) as u32;
        let y0 = v
            .iter()
            .map(|p| p[1])
            .fold(f64::INFINITY, f64::min)
            .floor()
            .max(0.0) as u32;
        let y1 = v
            .iter()
            .map(|p| p[1])
            .fold(0.0, f64::max)
            .ceil()
            .min((height - 1) as f64) as u32;
        for y in y0..=y1 {
            for x in x0..=x1 {
                let (_, outside) = barycentric(v, [x as f64 + 0.5, y as f64 + 0.5]);
                if outside <= 0.0 {
                    img.put_pixel(x, y, Rgb([c.r, c.g, c.b]));
                }
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
