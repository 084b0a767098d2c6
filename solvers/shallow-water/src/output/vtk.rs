//! The state as a VTK image (legacy binary `.vtk`) with cell data, for ParaView.

use super::{write_error, Snapshot};
use crate::FloodError;
use std::path::Path;
use vtkio::model::{
    Attribute, Attributes, ByteOrder, DataSet, Extent, ImageDataPiece, Piece, Version, Vtk,
};

/// Writes the depth, the surface elevation, the bed and the velocity `(u, v, 0)` of
/// every cell of `s`.
pub fn write(s: &Snapshot, path: &Path) -> Result<(), FloodError> {
    let g = s.grid;
    let points = [g.nx as u32 + 1, g.ny as u32 + 1, 1];
    let surface: Vec<f64> = s.depth.iter().zip(s.bed).map(|(h, b)| h + b).collect();
    let velocity = stencil_runtime::programs::vtk_vectors(&s.u, &s.v);
    let cell = vec![
        Attribute::scalars("depth", 1).with_data(s.depth.clone()),
        Attribute::scalars("surface", 1).with_data(surface),
        Attribute::scalars("bed", 1).with_data(s.bed.to_vec()),
        Attribute::vectors("velocity").with_data(velocity),
    ];
    let vtk = Vtk {
        version: Version::new((3, 0)),
        title: format!("shallow water at t = {} s", s.time),
        byte_order: ByteOrder::BigEndian,
        file_path: None,
        data: DataSet::ImageData {
            extent: Extent::Dims(points),
            origin: [g.x0 as f32, g.y0 as f32, 0.0],
            spacing: [g.dx as f32, g.dy as f32, 1.0],
            meta: None,
            pieces: vec![Piece::Inline(Box::new(ImageDataPiece {
                extent: Extent::Dims(points),
                data: Attributes {
                    point: Vec::new(),
                    cell,
                },
            }))],
        },
    };
    vtk.export(path).map_err(|e| write_error(path, e))
}
