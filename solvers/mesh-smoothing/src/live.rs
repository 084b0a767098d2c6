//! A smoothing run in the live view (`smooth --serve`): the mesh coloured by element
//! quality, with its edges where elements are large enough to see. Frames are rasterised
//! on the host from the mesh the run copies back after every sweep anyway (for its
//! quality table), so the live view moves nothing more from the device.

use crate::picture::raster;
use crate::quality::qualities;
use crate::{Mesh, MeshError};
use live_view::{Description, FieldInfo, Frame, FrameRequest, LayerKind, Palette};

/// Edges are drawn when the mean element is at least this many pixels across.
const EDGES_FROM_PIXELS: f64 = 6.0;

/// What the page shows of `mesh`, smoothed by `method`.
pub fn description(mesh: &Mesh, method: &str) -> Description {
    let (lo, hi) = mesh.bounds();
    Description {
        title: format!(
            "mesh smoothing ({method}): {} vertices, {} triangles",
            mesh.points.len(),
            mesh.triangles.len()
        ),
        fields: vec![FieldInfo {
            name: "quality".into(),
            unit: "element quality".into(),
            range: [0.0, 1.0],
            palette: Palette::Quality,
        }],
        marks: vec![],
        aspect: (hi[0] - lo[0]).max(1e-300) / (hi[1] - lo[1]).max(1e-300),
        clock: "sweep".into(),
    }
}

/// The mesh coloured by quality, fitted to the page's view.
pub fn draw(mesh: &Mesh, request: &FrameRequest) -> Result<Frame, MeshError> {
    let (lo, hi) = mesh.bounds();
    let aspect = (hi[0] - lo[0]).max(1e-300) / (hi[1] - lo[1]).max(1e-300);
    let [w, h] = request.view;
    // The larger side's pixels such that the picture fits the view.
    let across = if aspect >= 1.0 {
        (w as f64).min(h as f64 * aspect)
    } else {
        (h as f64).min(w as f64 / aspect)
    } as usize;
    let per_side = (mesh.triangles.len() as f64 / 2.0).sqrt().max(1.0);
    let edges = across as f64 / per_side >= EDGES_FROM_PIXELS;
    let (quality, lines) = raster(mesh, &qualities(mesh), across, edges);
    let frame = Frame::values(0, quality.width, quality.height, quality.values);
    Ok(match lines {
        Some(lines) => frame.with(LayerKind::Lines, lines.values),
        None => frame,
    })
}
