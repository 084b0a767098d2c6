//! The cavity in the live view (`cavity --serve`): vorticity or stream function, with the
//! stream function's level lines, downsampled on the backend to the page's view.

use crate::{Cavity, CavityError};
use live_view::{Description, FieldInfo, Frame, FrameRequest, LayerKind, Palette};
use stencil_runtime::Field;

/// The fields a page may show, in the order of [`Description::fields`].
const FIELDS: [&str; 2] = ["vorticity", "stream function"];

/// What the page shows of a cavity at Reynolds number `re`.
pub fn description(re: f64, n: usize) -> Description {
    Description {
        title: format!("lid-driven cavity, Re = {re}, {n} x {n} nodes"),
        fields: vec![
            FieldInfo {
                name: FIELDS[0].into(),
                unit: "vorticity (U / L)".into(),
                range: [-5.0, 5.0],
                palette: Palette::Diverging,
            },
            FieldInfo {
                name: FIELDS[1].into(),
                unit: "stream function (U L)".into(),
                range: [-0.12, 0.0],
                palette: Palette::Sequential,
            },
        ],
        marks: vec![],
        aspect: 1.0,
        clock: "t (L / U)".into(),
    }
}

/// Draws frames of a cavity, keeping the downsampler's fields between frames.
pub struct Painter {
    downsampler: live_view::Downsampler<f64>,
}

impl Painter {
    /// A painter for cavities on `flow`'s backend.
    pub fn new(flow: &Cavity) -> Painter {
        Painter {
            downsampler: live_view::Downsampler::new(flow.backend()),
        }
    }

    /// The requested field, with the stream function's level lines, from the whole
    /// grid's stream function `psi` and vorticity `vorticity` (a cavity's own fields on one
    /// rank; over several, gathered: [`Cavity::gather_whole`]).
    pub fn draw(
        &mut self,
        psi: &Field<f64>,
        vorticity: &Field<f64>,
        request: &FrameRequest,
    ) -> Result<Frame, CavityError> {
        let (w, h, lines) = self.downsampler.frame(psi, request.view)?;
        let values = if request.field == 1 {
            lines.clone()
        } else {
            self.downsampler.frame(vorticity, request.view)?.2
        };
        Ok(Frame::values(request.field.min(1), w, h, values).with(LayerKind::Contours, lines))
    }
}
