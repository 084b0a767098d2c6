//! The fields as a VTK structured-points file (legacy binary) for ParaView.

use super::Snapshot;
use crate::CavityError;
use std::path::Path;
use vtkio::model::{
    Attribute, Attributes, ByteOrder, DataSet, Extent, ImageDataPiece, Piece, Version, Vtk,
};

/// Writes `psi`, `w` and the velocity `(u, v, 0)` at every node.
pub fn write(s: &Snapshot, path: &Path) -> Result<(), CavityError> {
    let n = s.n as u32;
    let h = 1.0 / (s.n - 1) as f32;
    let velocity = stencil_runtime::programs::vtk_vectors(&s.u, &s.v);
    let point = vec![
        Attribute::scalars("psi", 1).with_data(s.psi.clone()),
        Attribute::scalars("vorticity", 1).with_data(s.w.clone()),
        Attribute::vectors("velocity").with_data(velocity),
    ];
    let vtk = Vtk {
        version: Version::new((3, 0)),
        title: "lid-driven cavity".into(),
        byte_order: ByteOrder::BigEndian,
        file_path: None,
        data: DataSet::ImageData {
            extent: Extent::Dims([n, n, 1]),
            origin: [0.0; 3],
            spacing: [h, h, 1.0],
            meta: None,
            pieces: vec![Piece::Inline(Box::new(ImageDataPiece {
                extent: Extent::Dims([n, n, 1]),
                data: Attributes {
                    point,
                    cell: Vec::new(),
                },
            }))],
        },
    };
    vtk.export(path).map_err(|e| CavityError::Output {
        path: path.into(),
        cause: e.to_string(),
    })
}
