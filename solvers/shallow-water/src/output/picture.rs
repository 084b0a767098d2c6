//! Pictures: the depth in blues over a grey hillshade of the terrain, north up; and an
//! animated GIF of a run's pictures.

use super::{write_error, Snapshot};
use crate::{FloodError, Grid};
use image::{Rgb, RgbImage};
use rayon::prelude::*;
use std::path::Path;

/// The largest side of a picture in pixels: larger grids are sampled every k-th cell.
const MAX_SIDE: usize = 2048;

/// The cells one pixel stands for along each axis.
fn stride(grid: &Grid) -> usize {
    grid.nx.max(grid.ny).div_ceil(MAX_SIDE)
}

/// The vertical exaggeration of the hillshade: valleys of a few metres on cells of tens
/// of metres would otherwise barely show.
const RELIEF: f64 = 4.0;

/// The terrain's shading in `[0, 1]` per cell (light from the north-west, 45 degrees up),
/// from the cell beds' central differences.
pub fn hillshade(grid: &Grid, bed: &[f64]) -> Vec<f64> {
    let (nx, ny) = (grid.nx, grid.ny);
    let at = |i: usize, j: usize| bed[j * nx + i];
    let light = {
        let (az, alt) = (315f64.to_radians(), 45f64.to_radians());
        [alt.cos() * az.sin(), alt.cos() * az.cos(), alt.sin()]
    };
    let mut shade = Vec::with_capacity(nx * ny);
    for j in 0..ny {
        for i in 0..nx {
            let (w, e) = (i.saturating_sub(1), (i + 1).min(nx - 1));
            let (s, n) = (j.saturating_sub(1), (j + 1).min(ny - 1));
            let zx = RELIEF * (at(e, j) - at(w, j)) / (((e - w).max(1)) as f64 * grid.dx);
            let zy = RELIEF * (at(i, n) - at(i, s)) / (((n - s).max(1)) as f64 * grid.dy);
            let norm = (zx * zx + zy * zy + 1.0).sqrt();
            let lit = (-zx * light[0] - zy * light[1] + light[2]) / norm;
            shade.push(lit.clamp(0.0, 1.0));
        }
    }
    shade
}

/// The picture of `s`: the hillshade `shade` where dry (at most `dry` deep), the depth in
/// blues (darkest at `scale` metres and deeper) where wet.
pub fn render(s: &Snapshot, shade: &[f64], scale: f64, dry: f64) -> RgbImage {
    let g = s.grid;
    let k = stride(g);
    let (w, h) = (g.nx.div_ceil(k), g.ny.div_ceil(k));
    RgbImage::from_fn(w as u32, h as u32, |px, py| {
        let i = px as usize * k;
        let j = g.ny - 1 - (py as usize * k).min(g.ny - 1);
        let c = j * g.nx + i;
        let grey = 60.0 + 180.0 * shade[c];
        let depth = s.depth[c];
        if depth <= dry {
            let v = grey as u8;
            return Rgb([v, v, v]);
        }
        let t = (depth / scale).clamp(0.0, 1.0);
        let blue = colorous::BLUES.eval_continuous(0.35 + 0.65 * t);
        // Shallow water lets the terrain show through.
        let a = 0.55 + 0.45 * t;
        let mix = |water: u8| (a * water as f64 + (1.0 - a) * grey) as u8;
        Rgb([mix(blue.r), mix(blue.g), mix(blue.b)])
    })
}

/// Writes `image` as a PNG.
pub fn write_png(image: &RgbImage, path: &Path) -> Result<(), FloodError> {
    image.save(path).map_err(|e| write_error(path, e))
}

/// How hard the GIF's palette search works per frame (1: best, 30: fastest); 10 is the
/// `gif` crate's default.
const GIF_SPEED: i32 = 10;

/// Assembles the PNG files `frames` (in order) into an animated GIF at `path`, each frame
/// shown `frame_ms` milliseconds, looping. The frames are read and given their palettes
/// on all cores (the slow part: about 50 ms a frame of Malpasset), then written in order.
pub fn write_gif(
    frames: &[std::path::PathBuf],
    path: &Path,
    frame_ms: u32,
) -> Result<(), FloodError> {
    let coded = frames
        .par_iter()
        .map(|f| {
            let rgb = image::open(f).map_err(|e| write_error(f, e))?.to_rgb8();
            let side = |x: u32| u16::try_from(x).map_err(|_| write_error(f, "too large for a GIF"));
            let (w, h) = (side(rgb.width())?, side(rgb.height())?);
            let mut frame = gif::Frame::from_rgb_speed(w, h, rgb.as_raw(), GIF_SPEED);
            frame.delay = u16::try_from(frame_ms / 10).unwrap_or(u16::MAX);
            Ok(frame)
        })
        .collect::<Result<Vec<_>, FloodError>>()?;
    let w = coded.iter().map(|f| f.width).max().unwrap_or(1);
    let h = coded.iter().map(|f| f.height).max().unwrap_or(1);
    let file = std::fs::File::create(path).map_err(|e| write_error(path, e))?;
    let mut gif = gif::Encoder::new(std::io::BufWriter::new(file), w, h, &[])
        .map_err(|e| write_error(path, e))?;
    gif.set_repeat(gif::Repeat::Infinite)
        .map_err(|e| write_error(path, e))?;
    for frame in &coded {
        gif.write_frame(frame).map_err(|e| write_error(path, e))?;
    }
    Ok(())
}
