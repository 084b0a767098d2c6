//! The state as a VTK image (legacy binary `.vtk`) for ParaView: one point per cell, at
//! the cell's centre. (Cell data on an image of the cells' corners would be the other
//! way, but vtkio 0.6's legacy writer declares an image's cell data as `CELL_DATA 0`,
//! which readers then reject or misread.)

use super::{write_error, Snapshot};
use crate::FloodError;
use std::path::Path;
use vtkio::model::{
    Attribute, Attributes, ByteOrder, DataSet, Extent, IOBuffer, ImageDataPiece, Piece, Version,
    Vtk,
};

/// Writes the depth, the surface elevation, the bed and the velocity `(u, v, 0)` of
/// every cell of `s` at the cell's centre, as 32-bit floats when `single` (an f32 run:
/// half the bytes, and every value the run computed), else 64-bit.
pub fn write(s: &Snapshot, path: &Path, single: bool) -> Result<(), FloodError> {
    let g = s.grid;
    let points = [g.nx as u32, g.ny as u32, 1];
    let surface: Vec<f64> = s.depth.iter().zip(s.bed).map(|(h, b)| h + b).collect();
    let velocity = stencil_runtime::programs::vtk_vectors(&s.u, &s.v);
    let data = |values: Vec<f64>| -> IOBuffer {
        if single {
            values
                .into_iter()
                .map(|x| x as f32)
                .collect::<Vec<f32>>()
                .into()
        } else {
            values.into()
        }
    };
    let point = vec![
        Attribute::scalars("depth", 1).with_data(data(s.depth.clone())),
        Attribute::scalars("surface", 1).with_data(data(surface)),
        Attribute::scalars("bed", 1).with_data(data(s.bed.to_vec())),
        Attribute::vectors("velocity").with_data(data(velocity)),
    ];
    let vtk = Vtk {
        version: Version::new((3, 0)),
        title: format!("shallow water at t = {} s", s.time),
        byte_order: ByteOrder::BigEndian,
        file_path: None,
        data: DataSet::ImageData {
            extent: Extent::Dims(points),
            origin: [(g.x0 + 0.5 * g.dx) as f32, (g.y0 + 0.5 * g.dy) as f32, 0.0],
            spacing: [g.dx as f32, g.dy as f32, 1.0],
            meta: None,
            pieces: vec![Piece::Inline(Box::new(ImageDataPiece {
                extent: Extent::Dims(points),
                data: Attributes {
                    point,
                    cell: Vec::new(),
                },
            }))],
        },
    };
    vtk.export(path).map_err(|e| write_error(path, e))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The file reads back (vtkio's legacy parser) with one value per cell of every
    /// attribute, in both precisions, at the cells' centres.
    #[test]
    fn a_written_state_reads_back_one_value_per_cell() {
        let grid = crate::Grid::new(5, 3, 2.0, 4.0, 10.0, 20.0).unwrap();
        let n = 15;
        let depth: Vec<f64> = (0..n).map(|k| 0.25 * k as f64).collect();
        let bed = vec![1.0; n];
        let snapshot = Snapshot {
            grid: &grid,
            bed: &bed,
            depth: depth.clone(),
            u: vec![0.5; n],
            v: vec![-0.5; n],
            time: 3.0,
        };
        let dir = tempfile::tempdir().unwrap();
        for single in [true, false] {
            let path = dir.path().join(format!("s{single}.vtk"));
            write(&snapshot, &path, single).unwrap();
            let vtk = Vtk::import(&path).unwrap();
            let DataSet::ImageData { origin, pieces, .. } = vtk.data else {
                panic!("not an image: {:?}", vtk.data)
            };
            assert_eq!(origin, [11.0, 22.0, 0.0]);
            let Piece::Inline(piece) = &pieces[0] else {
                panic!("not inline")
            };
            let ImageDataPiece { extent, data } = piece.as_ref();
            assert_eq!(extent.clone().into_dims(), [5, 3, 1]);
            assert!(data.cell.is_empty());
            let lengths: Vec<(String, usize)> = data
                .point
                .iter()
                .map(|a| match a {
                    Attribute::DataArray(d) => (d.name.clone(), d.data.len()),
                    Attribute::Field { name, .. } => (name.clone(), 0),
                })
                .collect();
            let want = [
                ("depth", n),
                ("surface", n),
                ("bed", n),
                ("velocity", 3 * n),
            ];
            let want: Vec<(String, usize)> =
                want.iter().map(|(a, l)| (a.to_string(), *l)).collect();
            assert_eq!(lengths, want, "single {single}");
            let Attribute::DataArray(d) = &data.point[0] else {
                unreachable!()
            };
            let read: Vec<f64> = d.data.clone().cast_into::<f64>().unwrap();
            assert_eq!(read, depth, "single {single}");
        }
    }
}
