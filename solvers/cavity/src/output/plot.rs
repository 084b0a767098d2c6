//! A picture of the centre-line profiles, with the reference's points where one exists.

use super::Profiles;
use crate::reference::Reference;
use crate::CavityError;
use plotters::prelude::*;
use std::path::Path;

/// The labels' font (DejaVu Sans, see `assets/DejaVuSans.LICENSE`), embedded so that
/// plots need no system fonts.
static FONT: &[u8] = include_bytes!("../../assets/DejaVuSans.ttf");

type Drawn = Result<(), Box<dyn std::error::Error>>;

/// Draws `u(0.5, y)` against `y` and `v(x, 0.5)` against `x` side by side into a PNG.
pub fn centre_lines(
    p: &Profiles,
    reference: Option<&Reference>,
    re: f64,
    path: &Path,
) -> Result<(), CavityError> {
    static FONT_ONCE: std::sync::Once = std::sync::Once::new();
    FONT_ONCE.call_once(|| {
        // A font that fails to load leaves the plot without labels; the data still draws.
        let _ = plotters::style::register_font("sans-serif", FontStyle::Normal, FONT);
    });
    draw(p, reference, re, path).map_err(|e| CavityError::Output {
        path: path.into(),
        cause: e.to_string(),
    })
}

/// The picture's width and height in pixels.
const SIZE: (u32, u32) = (1100, 520);

/// Draws the picture into an RGB buffer and writes that as a PNG (plotters draws, the
/// `image` crate encodes).
fn draw(p: &Profiles, reference: Option<&Reference>, re: f64, path: &Path) -> Drawn {
    let mut rgb = vec![0u8; SIZE.0 as usize * SIZE.1 as usize * 3];
    draw_into(&mut rgb, p, reference, re)?;
    let picture =
        image::RgbImage::from_raw(SIZE.0, SIZE.1, rgb).ok_or("a buffer of the wrong size")?;
    picture.save(path)?;
    Ok(())
}

fn draw_into(rgb: &mut [u8], p: &Profiles, reference: Option<&Reference>, re: f64) -> Drawn {
    let root = BitMapBackend::with_buffer(rgb, SIZE).into_drawing_area();
    root.fill(&WHITE)?;
    let (left, right) = root.split_horizontally(550);
    let none = Vec::new();
    let (u_ref, v_ref) = reference.map_or((&none, &none), |r| (&r.u_vertical, &r.v_horizontal));
    // u along the vertical line, drawn as in Ghia et al.: u across, y up.
    let u_line: Vec<(f64, f64)> = p.u.iter().zip(&p.coords).map(|(&u, &y)| (u, y)).collect();
    let u_points: Vec<(f64, f64)> = u_ref.iter().map(|&(y, u)| (u, y)).collect();
    panel(
        &left,
        &format!("u(0.5, y), Re = {re}"),
        ("u", "y"),
        &u_line,
        &u_points,
        true,
    )?;
    let v_line: Vec<(f64, f64)> = p.coords.iter().zip(&p.v).map(|(&x, &v)| (x, v)).collect();
    panel(
        &right,
        &format!("v(x, 0.5), Re = {re}"),
        ("x", "v"),
        &v_line,
        v_ref,
        false,
    )?;
    root.present()?;
    Ok(())
}

fn panel(
    area: &DrawingArea<BitMapBackend, plotters::coord::Shift>,
    title: &str,
    (x_name, y_name): (&str, &str),
    line: &[(f64, f64)],
    points: &[(f64, f64)],
    velocity_across: bool,
) -> Drawn {
    let span = |pick: fn(&(f64, f64)) -> f64| {
        let (lo, hi) = line
            .iter()
            .chain(points)
            .map(pick)
            .fold((f64::INFINITY, f64::NEG_INFINITY), |(a, b), v| {
                (a.min(v), b.max(v))
            });
        let pad = 0.05 * (hi - lo).max(1e-3);
        (lo - pad)..(hi + pad)
    };
    let (xs, ys) = if velocity_across {
        (span(|p| p.0), 0.0..1.0)
    } else {
        (0.0..1.0, span(|p| p.1))
    };
    let mut chart = ChartBuilder::on(area)
        .caption(title, ("sans-serif", 22))
        .margin(12)
        .x_label_area_size(40)
        .y_label_area_size(55)
        .build_cartesian_2d(xs, ys)?;
    chart
        .configure_mesh()
        .x_desc(x_name)
        .y_desc(y_name)
        .label_style(("sans-serif", 15))
        .draw()?;
    chart
        .draw_series(LineSeries::new(line.iter().copied(), BLUE.stroke_width(2)))?
        .label("this run")
        .legend(|(x, y)| PathElement::new(vec![(x, y), (x + 20, y)], BLUE.stroke_width(2)));
    if !points.is_empty() {
        chart
            .draw_series(
                points
                    .iter()
                    .map(|&p| Circle::new(p, 4, RED.stroke_width(2))),
            )?
            .label("Ghia, Ghia & Shin (1982)")
            .legend(|(x, y)| Circle::new((x + 10, y), 4, RED.stroke_width(2)));
    }
    chart
        .configure_series_labels()
        .label_font(("sans-serif", 15))
        .background_style(WHITE.mix(0.8))
        .border_style(BLACK)
        .position(SeriesLabelPosition::UpperLeft)
        .draw()?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The plot is a PNG of its size with the curves drawn in colour on white.
    #[test]
    fn the_plot_is_a_png_with_its_curves() {
        let coords: Vec<f64> = (0..=32).map(|k| k as f64 / 32.0).collect();
        let profiles = Profiles {
            u: coords.iter().map(|y| 2.0 * y - 1.0).collect(),
            v: coords.iter().map(|x| (6.0 * x).sin() * 0.3).collect(),
            coords,
        };
        let path = std::env::temp_dir().join(format!("cavity-plot-{}.png", std::process::id()));
        centre_lines(&profiles, None, 100.0, &path).unwrap();
        let picture = image::open(&path).unwrap().to_rgb8();
        std::fs::remove_file(&path).unwrap();
        assert_eq!(picture.dimensions(), SIZE);
        let coloured = picture
            .pixels()
            .filter(|p| p.0.iter().max().unwrap() - p.0.iter().min().unwrap() > 60)
            .count();
        assert!(
            coloured > 500,
            "{coloured} coloured pixels: no curves drawn"
        );
    }
}
