//! A flood in the live view (`flood --serve`): the depth over the hillshaded terrain with
//! the flood front and the gauges, or the speed, downsampled where the state lives (also
//! for a sparse run: its blocks are copied into dense fields on the device first). Over
//! several ranks rank 0 serves the view and every rank draws its own blocks
//! ([`Live`], in `ranks.rs`).

mod ranks;

pub use ranks::{Live, Served};

use crate::{FloodError, Flow, Grid, Scenario};
use live_view::{
    Description, Downsampler, FieldInfo, Frame, FrameRequest, LayerKind, Mark, Palette,
};
use stencil_runtime::{Backend, Field, Real};

/// Depths up to this (m) show the terrain.
const SHOWN_DRY: f64 = 0.01;

/// What the page shows of `scenario` on `grid`, blues reaching their darkest at
/// `depth_scale` metres.
pub fn description(scenario: &Scenario, grid: &Grid, depth_scale: f64) -> Description {
    Description {
        title: format!("flood: {} ({} x {} cells)", scenario.name, grid.nx, grid.ny),
        fields: vec![
            FieldInfo {
                name: "depth".into(),
                unit: "depth (m)".into(),
                range: [SHOWN_DRY, depth_scale.max(2.0 * SHOWN_DRY)],
                palette: Palette::Water,
            },
            FieldInfo {
                name: "speed".into(),
                unit: "speed (m/s)".into(),
                range: [0.0, 10.0],
                palette: Palette::Sequential,
            },
        ],
        marks: scenario
            .gauges
            .iter()
            .map(|g| Mark {
                name: g.name.clone(),
                x: (g.i as f64 + 0.5) / grid.nx as f64,
                y: (g.j as f64 + 0.5) / grid.ny as f64,
            })
            .collect(),
        aspect: (grid.nx as f64 * grid.dx) / (grid.ny as f64 * grid.dy),
        clock: "t (s)".into(),
    }
}

/// Draws frames of a flood, keeping its fields between frames: dense fields of the whole
/// grid where the state lives (over ranks, zero outside this rank's blocks).
pub struct Painter<T: Real> {
    depth: Field<T>,
    speed: Field<T>,
    on_device: Downsampler<T>,
    /// The relief layer, on the rank that serves.
    relief: Option<Relief>,
}

/// The terrain's hillshade (one value per cell, 0 to 1) and its downsampling on the host.
struct Relief {
    shade: Field<f64>,
    on_host: Downsampler<f64>,
}

impl<T: Real> Painter<T> {
    /// A painter for `flow`, with the terrain's hillshade `shade` (one value per cell, row
    /// by row from the south) where this process composes frames (rank 0 over several).
    pub fn new(flow: &Flow<T>, shade: Option<&[f64]>) -> Result<Painter<T>, FloodError> {
        let g = *flow.grid();
        let backend = flow.backend();
        let relief = shade.map(|shade| Relief {
            shade: Field::from_fn(&[g.nx, g.ny], 1, |[i, j, _]| {
                let (i, j) = (i.clamp(0, g.nx as isize - 1), j.clamp(0, g.ny as isize - 1));
                shade[i as usize + j as usize * g.nx]
            }),
            on_host: Downsampler::new(&Backend::Cpu),
        });
        Ok(Painter {
            depth: Field::zeros_on(backend, &[g.nx, g.ny], 1)?,
            speed: Field::zeros_on(backend, &[g.nx, g.ny], 1)?,
            on_device: Downsampler::new(backend),
            relief,
        })
    }

    /// The downsampled depth, and the speed when the page shows it, of this process's
    /// part of the flow (over ranks: its own blocks, zero elsewhere, so that the ranks'
    /// layers add up to the whole picture).
    fn layers(&mut self, flow: &Flow<T>, request: &FrameRequest) -> Result<Layers, FloodError> {
        let with_speed = request.field == 1;
        flow.picture(&mut self.depth, &mut self.speed, with_speed)?;
        let (width, height, depth) = self.on_device.frame(&self.depth, request.view)?;
        let speed = if with_speed {
            Some(self.on_device.frame(&self.speed, request.view)?.2)
        } else {
            None
        };
        Ok(Layers {
            width,
            height,
            depth,
            speed,
        })
    }

    /// The frame of the whole flow's `layers`: the speed shown where the water is, and
    /// the relief when the page asks for it.
    fn compose(&mut self, layers: Layers, request: &FrameRequest) -> Result<Frame, FloodError> {
        let Layers {
            width,
            height,
            depth,
            speed,
        } = layers;
        let frame = match speed {
            Some(speed) => {
                // Dry cells show the terrain.
                let shown = speed
                    .iter()
                    .zip(&depth)
                    .map(|(&s, &d)| {
                        if f64::from(d) > SHOWN_DRY {
                            s
                        } else {
                            f32::NAN
                        }
                    })
                    .collect();
                Frame::values(1, width, height, shown)
            }
            None => Frame::values(0, width, height, depth),
        };
        match &mut self.relief {
            Some(r) if request.full => {
                let (_, _, relief) = r.on_host.frame(&r.shade, request.view)?;
                Ok(frame.with(LayerKind::Relief, relief))
            }
            _ => Ok(frame),
        }
    }
}

/// A frame's values before they are shown: the depth and (for the speed field) the
/// speed, downsampled to `width` x `height`, row by row.
struct Layers {
    width: usize,
    height: usize,
    depth: Vec<f32>,
    speed: Option<Vec<f32>>,
}
