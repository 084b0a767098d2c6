//! Colour pictures of the stream function and the vorticity with contour lines at the
//! levels Ghia et al. (1982) plot.

use super::Snapshot;
use crate::CavityError;
use std::path::Path;

/// Pixels per side of a picture.
pub const SIDE: u32 = 640;

/// Ghia et al.'s stream-function contour levels (their Table III).
const PSI_LEVELS: [f64; 24] = [
    -1.175e-1, -1.15e-1, -1.1e-1, -1e-1, -9e-2, -7e-2, -5e-2, -3e-2, -1e-2, -1e-4, -1e-5, -1e-7,
    -1e-10, 1e-8, 1e-7, 1e-6, 1e-5, 5e-5, 1e-4, 2.5e-4, 5e-4, 1e-3, 1.5e-3, 3e-3,
];

/// Their vorticity contour levels (Table IV).
const W_LEVELS: [f64; 11] = [-3.0, -2.0, -1.0, -0.5, 0.0, 0.5, 1.0, 2.0, 3.0, 4.0, 5.0];

/// The stream function: colour by value (viridis), black contours at Ghia's levels.
pub fn stream_function(s: &Snapshot, path: &Path) -> Result<(), CavityError> {
    let (lo, hi) = range(&s.psi);
    let picture = image(s.n, &s.psi, &PSI_LEVELS, |v| {
        colorous::VIRIDIS.eval_continuous(((v - lo) / (hi - lo).max(1e-300)).clamp(0.0, 1.0))
    });
    save(&picture, path)
}

/// The vorticity: a diverging colour map clipped to `[-5, 5]`, black contours at Ghia's
/// levels.
pub fn vorticity(s: &Snapshot, path: &Path) -> Result<(), CavityError> {
    save(&vorticity_image(s), path)
}

/// The picture of [`vorticity`].
pub fn vorticity_image(s: &Snapshot) -> image::RgbImage {
    image(s.n, &s.w, &W_LEVELS, |v| {
        colorous::RED_BLUE.eval_continuous((0.5 - v / 10.0).clamp(0.0, 1.0))
    })
}

/// Writes `image` to `path` (PNG).
pub fn save(image: &image::RgbImage, path: &Path) -> Result<(), CavityError> {
    image.save(path).map_err(|e| CavityError::Output {
        path: path.into(),
        cause: e.to_string(),
    })
}

fn range(values: &[f64]) -> (f64, f64) {
    values
        .iter()
        .fold((f64::INFINITY, f64::NEG_INFINITY), |(a, b), &v| {
            (a.min(v), b.max(v))
        })
}

/// How many of `levels` (ascending) lie below `v`.
fn band(levels: &[f64], v: f64) -> usize {
    levels.partition_point(|&l| l < v)
}

/// Samples `values` (`n x n` nodes, x fastest, y up) bilinearly at every pixel, colours
/// it, and blackens pixels where the contour band changes from a neighbour's.
fn image(
    n: usize,
    values: &[f64],
    levels: &[f64],
    colour: impl Fn(f64) -> colorous::Color,
) -> image::RgbImage {
    let side = SIDE as usize;
    let sample = |px: usize, py: usize| {
        let x = px as f64 / (side - 1) as f64 * (n - 1) as f64;
        let y = (side - 1 - py) as f64 / (side - 1) as f64 * (n - 1) as f64;
        let (i, j) = ((x as usize).min(n - 2), (y as usize).min(n - 2));
        let (tx, ty) = (x - i as f64, y - j as f64);
        let at = |a: usize, b: usize| values[a + n * b];
        (1.0 - ty) * ((1.0 - tx) * at(i, j) + tx * at(i + 1, j))
            + ty * ((1.0 - tx) * at(i, j + 1) + tx * at(i + 1, j + 1))
    };
    let field: Vec<f64> = (0..side * side)
        .map(|k| sample(k % side, k / side))
        .collect();
    let bands: Vec<usize> = field.iter().map(|&v| band(levels, v)).collect();
    image::RgbImage::from_fn(SIDE, SIDE, |px, py| {
        let k = px as usize + side * py as usize;
        let right = px as usize + 1 < side && bands[k + 1] != bands[k];
        let below = (py as usize) + 1 < side && bands[k + side] != bands[k];
        if right || below {
            image::Rgb([0, 0, 0])
        } else {
            let c = colour(field[k]);
            image::Rgb([c.r, c.g, c.b])
        }
    })
}
