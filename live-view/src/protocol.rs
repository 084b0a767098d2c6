//! What the page and the server say to each other.
//!
//! On connecting, a page receives the run's [`Description`] as a JSON text message
//! (`{"kind": "hello", ...}`), then [`Status`] messages (`{"kind": "status", ...}`, a few
//! per second) and frames as binary messages: a little-endian `u32` byte length, a JSON
//! header (`{"kind": "frame", "field", "width", "height", "layers", "status"}`), spaces
//! (JSON white space) to a multiple of four bytes, then each layer's `width * height` little-endian
//! `f32` values, row by row from the south-west corner (NaN where there is nothing to show).
//! The page sends [`Command`]s as JSON text.

use serde::{Deserialize, Serialize};

/// What a run shows: its title, the fields a page may pick, and fixed marks.
#[derive(Clone, Debug, Serialize)]
pub struct Description {
    /// The run's name, shown as the page's heading.
    pub title: String,
    /// The fields the page offers; the first is shown first.
    pub fields: Vec<FieldInfo>,
    /// Marked points (gauges), as fractions of the domain from its south-west corner.
    pub marks: Vec<Mark>,
    /// The domain's width over its height.
    pub aspect: f64,
    /// What the status's time counts, as the page labels it: `"t (s)"`, `"sweep"`.
    pub clock: String,
}

/// One field a page may show.
#[derive(Clone, Debug, Serialize)]
pub struct FieldInfo {
    /// The name shown in the field menu.
    pub name: String,
    /// The unit shown on the colour bar.
    pub unit: String,
    /// The colour range shown until the user sets another.
    pub range: [f64; 2],
    /// How values become colours.
    pub palette: Palette,
}

/// How a page turns values into colours.
#[derive(Clone, Copy, Debug, Serialize, PartialEq, Eq)]
#[serde(rename_all = "kebab-case")]
pub enum Palette {
    /// Blue through white to red, for signed values (vorticity).
    Diverging,
    /// Dark to bright (viridis), for magnitudes.
    Sequential,
    /// Shades of blue over a grey relief, for water depth; points at or below the range's
    /// low end are dry and show the relief (the frame's `relief` layer).
    Water,
    /// Red through yellow to green, for a quality in [0, 1].
    Quality,
}

/// A marked point, such as a gauge.
#[derive(Clone, Debug, Serialize)]
pub struct Mark {
    /// Its label.
    pub name: String,
    /// Its position from the west edge, as a fraction of the domain's width.
    pub x: f64,
    /// Its position from the south edge, as a fraction of the domain's height.
    pub y: f64,
}

/// The run's state as a page shows it.
#[derive(Clone, Debug, Default, Serialize, PartialEq)]
pub struct Status {
    /// Counts the statuses sent: a page ignores one older than what it has shown (frames
    /// and status messages may arrive in either order).
    pub seq: u64,
    /// The simulated time (seconds), or the sweep for runs without time.
    pub time: f64,
    /// Steps taken.
    pub step: u64,
    /// Steps per second of wall time, over the last second or so.
    pub steps_per_second: f64,
    /// How far the run has come, from 0 to 1.
    pub progress: f64,
    /// Whether the run is paused.
    pub paused: bool,
    /// Whether the run has ended.
    pub finished: bool,
    /// The latest notice for the user (a checkpoint written, an error).
    pub notice: String,
}

/// What a page asks of the run.
#[derive(Clone, Debug, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct Command {
    /// Pause (true) or resume (false).
    #[serde(default)]
    pub pause: Option<bool>,
    /// Show this field (an index into the description's fields).
    #[serde(default)]
    pub field: Option<usize>,
    /// The canvas's size in pixels: frames are downsampled to fit it.
    #[serde(default)]
    pub view: Option<[usize; 2]>,
    /// Write a checkpoint now.
    #[serde(default)]
    pub checkpoint: Option<bool>,
}

/// One layer of a frame.
#[derive(Clone, Copy, Debug, Serialize, PartialEq, Eq)]
#[serde(rename_all = "kebab-case")]
pub enum LayerKind {
    /// The field's values, coloured by its palette.
    Values,
    /// Values whose level lines are drawn over the picture (the stream function).
    Contours,
    /// A relief from 0 (shadow) to 1 (lit), drawn where the field shows nothing.
    Relief,
    /// Lines (1) over the picture, such as a mesh's edges.
    Lines,
}

/// A picture of one field, downsampled to the page's view.
#[derive(Clone, Debug)]
pub struct Frame {
    /// The shown field's index.
    pub field: usize,
    /// Columns.
    pub width: usize,
    /// Rows.
    pub height: usize,
    /// The layers: each `width * height` values, row by row from the south-west corner.
    pub layers: Vec<(LayerKind, Vec<f32>)>,
}

impl Frame {
    /// A frame of one layer of values.
    pub fn values(field: usize, width: usize, height: usize, values: Vec<f32>) -> Frame {
        Frame {
            field,
            width,
            height,
            layers: vec![(LayerKind::Values, values)],
        }
    }

    /// Adds a layer (of `width * height` values).
    pub fn with(mut self, kind: LayerKind, values: Vec<f32>) -> Frame {
        self.layers.push((kind, values));
        self
    }

    /// The binary message: length, header, padding, layers (see the module's doc).
    pub(crate) fn encode(&self, status: &Status) -> Result<Vec<u8>, crate::Error> {
        for (kind, values) in &self.layers {
            if values.len() != self.width * self.height {
                return Err(crate::Error::Frame(format!(
                    "the {kind:?} layer has {} values for a {} x {} frame",
                    values.len(),
                    self.width,
                    self.height
                )));
            }
        }
        #[derive(Serialize)]
        struct Header<'a> {
            kind: &'static str,
            field: usize,
            width: usize,
            height: usize,
            layers: Vec<LayerKind>,
            status: &'a Status,
        }
        let header = serde_json::to_vec(&Header {
            kind: "frame",
            field: self.field,
            width: self.width,
            height: self.height,
            layers: self.layers.iter().map(|(k, _)| *k).collect(),
            status,
        })
        .map_err(|e| crate::Error::Frame(e.to_string()))?;
        let padded = header.len().div_ceil(4) * 4;
        let values: usize = self.layers.iter().map(|(_, v)| v.len()).sum();
        let mut out = Vec::with_capacity(4 + padded + 4 * values);
        out.extend_from_slice(&(header.len() as u32).to_le_bytes());
        out.extend_from_slice(&header);
        out.resize(4 + padded, b' ');
        for (_, layer) in &self.layers {
            for v in layer {
                out.extend_from_slice(&v.to_le_bytes());
            }
        }
        Ok(out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn frames_encode_length_header_and_aligned_layers() {
        let f =
            Frame::values(1, 2, 1, vec![1.5, f32::NAN]).with(LayerKind::Contours, vec![0.0, 2.0]);
        let bytes = f.encode(&Status::default()).unwrap();
        let len = u32::from_le_bytes(bytes[..4].try_into().unwrap()) as usize;
        let header: serde_json::Value = serde_json::from_slice(&bytes[4..4 + len]).unwrap();
        assert_eq!(header["width"], 2);
        assert_eq!(header["layers"][1], "contours");
        let start = 4 + len.div_ceil(4) * 4;
        assert_eq!(start % 4, 0);
        assert_eq!(bytes.len(), start + 16);
        assert_eq!(
            f32::from_le_bytes(bytes[start..start + 4].try_into().unwrap()),
            1.5
        );
        assert!(f32::from_le_bytes(bytes[start + 4..start + 8].try_into().unwrap()).is_nan());
        assert_eq!(
            f32::from_le_bytes(bytes[start + 12..].try_into().unwrap()),
            2.0
        );
    }

    #[test]
    fn a_layer_of_the_wrong_size_is_an_error() {
        let f = Frame::values(0, 2, 2, vec![0.0; 3]);
        assert!(matches!(
            f.encode(&Status::default()),
            Err(crate::Error::Frame(_))
        ));
    }

    #[test]
    fn commands_parse_and_unknown_keys_are_refused() {
        let c: Command = serde_json::from_str(r#"{"pause": true, "view": [640, 480]}"#).unwrap();
        assert_eq!(c.pause, Some(true));
        assert_eq!(c.view, Some([640, 480]));
        assert!(serde_json::from_str::<Command>(r#"{"rm": "-rf"}"#).is_err());
    }
}
