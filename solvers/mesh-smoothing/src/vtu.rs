//! VTK unstructured grids (`.vtu`): reading triangles, points and data arrays stored as
//! ASCII, inline base64 or appended base64, each optionally zlib-compressed (the form of
//! `../shared/data/meshes/*.vtu`); writing a mesh with cell data as ASCII `.vtu`.

use crate::{Mesh, MeshError, Metric};
use base64::Engine as _;
use std::collections::BTreeMap;
use std::io::Read as _;
use std::path::Path;

/// A data array: its number of components and its values (row by row).
#[derive(Clone, Debug, PartialEq)]
pub struct Array {
    /// Values per tuple.
    pub components: usize,
    /// The values, converted to `f64`.
    pub values: Vec<f64>,
}

/// What a `.vtu` file holds: points, triangles and named point and cell arrays.
#[derive(Clone, Debug)]
pub struct VtuFile {
    /// Point coordinates (x, y; z is dropped).
    pub points: Vec<[f64; 2]>,
    /// Triangles (every cell must be one).
    pub triangles: Vec<[usize; 3]>,
    /// Point data by name.
    pub point_data: BTreeMap<String, Array>,
    /// Cell data by name.
    pub cell_data: BTreeMap<String, Array>,
}

/// The VTK cell type of a triangle.
const VTK_TRIANGLE: i64 = 5;

fn input(path: &Path, message: impl Into<String>) -> MeshError {
    MeshError::Input {
        file: path.display().to_string(),
        message: message.into(),
    }
}

/// How the arrays' bytes are stored.
struct Encoding<'a> {
    /// 4 (`UInt32`) or 8 (`UInt64`) bytes per header number.
    header: usize,
    compressed: bool,
    /// The appended data after its `_`, if any.
    appended: Option<&'a str>,
}

impl VtuFile {
    /// Reads `path`.
    pub fn read(path: &Path) -> Result<VtuFile, MeshError> {
        let text = std::fs::read_to_string(path)
            .map_err(|e| input(path, format!("cannot read it: {e}")))?;
        VtuFile::parse(path, &text)
    }

    /// Parses the text of a `.vtu` file (`path` names it in errors).
    pub fn parse(path: &Path, text: &str) -> Result<VtuFile, MeshError> {
        let doc = roxmltree::Document::parse(text)
            .map_err(|e| input(path, format!("not well-formed XML: {e}")))?;
        let root = doc.root_element();
        if root.attribute("type") != Some("UnstructuredGrid") {
            return Err(input(path, "not a VTK UnstructuredGrid file"));
        }
        if root
            .attribute("byte_order")
            .is_some_and(|b| b != "LittleEndian")
        {
            return Err(input(path, "big-endian data is not supported"));
        }
        let header = match root.attribute("header_type").unwrap_or("UInt32") {
            "UInt32" => 4,
            "UInt64" => 8,
            other => {
                return Err(input(
                    path,
                    format!("header_type `{other}` is not supported"),
                ))
            }
        };
        let compressed = match root.attribute("compressor") {
            None | Some("") => false,
            Some("vtkZLibDataCompressor") => true,
            Some(other) => {
                return Err(input(
                    path,
                    format!("compressor `{other}` is not supported (zlib only)"),
                ))
            }
        };
        let appended_node = root.descendants().find(|n| n.has_tag_name("AppendedData"));
        let appended = match appended_node {
            Some(n) => {
                if n.attribute("encoding") != Some("base64") {
                    return Err(input(
                        path,
                        "raw appended data is not supported: save the file with base64 encoding",
                    ));
                }
                let t = n.text().unwrap_or("").trim_start();
                Some(
                    t.strip_prefix('_')
                        .ok_or_else(|| input(path, "appended data does not start with `_`"))?,
                )
            }
            None => None,
        };
        let enc = Encoding {
            header,
            compressed,
            appended,
        };
        let piece = root
            .descendants()
            .find(|n| n.has_tag_name("Piece"))
            .ok_or_else(|| input(path, "no Piece"))?;
        let count = |name: &str| -> Result<usize, MeshError> {
            piece
                .attribute(name)
                .and_then(|v| v.trim().parse().ok())
                .ok_or_else(|| input(path, format!("the Piece has no valid {name}")))
        };
        let (n_points, n_cells) = (count("NumberOfPoints")?, count("NumberOfCells")?);
        let arrays_in = |section: &str| -> Result<BTreeMap<String, Array>, MeshError> {
            let mut out = BTreeMap::new();
            if let Some(s) = piece.children().find(|n| n.has_tag_name(section)) {
                for a in s.children().filter(|n| n.has_tag_name("DataArray")) {
                    let name = a.attribute("Name").unwrap_or("").to_string();
                    out.insert(name, read_array(path, &a, &enc)?);
                }
            }
            Ok(out)
        };
        let points_arr = arrays_in("Points")?;
        let cells = arrays_in("Cells")?;
        let point_data = arrays_in("PointData")?;
        let cell_data = arrays_in("CellData")?;
        let pts = points_arr
            .values()
            .next()
            .ok_or_else(|| input(path, "no Points array"))?;
        if pts.values.len() != n_points * pts.components || pts.components < 2 {
            return Err(input(
                path,
                format!(
                    "Points holds {} values for {n_points} points",
                    pts.values.len()
                ),
            ));
        }
        let points = pts
            .values
            .chunks(pts.components)
            .map(|c| [c[0], c[1]])
            .collect();
        let get = |name: &str| {
            cells
                .get(name)
                .ok_or_else(|| input(path, format!("the Cells have no `{name}` array")))
        };
        let (conn, offsets, types) = (get("connectivity")?, get("offsets")?, get("types")?);
        if offsets.values.len() != n_cells || types.values.len() != n_cells {
            return Err(input(
                path,
                format!("the Cells arrays do not hold {n_cells} cells"),
            ));
        }
        let mut triangles = Vec::with_capacity(n_cells);
        let mut start = 0usize;
        for k in 0..n_cells {
            let end = offsets.values[k] as usize;
            if types.values[k] as i64 != VTK_TRIANGLE || end != start + 3 || end > conn.values.len()
            {
                return Err(input(
                    path,
                    format!("cell {k} is not a triangle (VTK type {}): only triangular meshes are supported", types.values[k]),
                ));
            }
            let v = &conn.values[start..end];
            triangles.push([v[0] as usize, v[1] as usize, v[2] as usize]);
            start = end;
        }
        for (name, a) in &point_data {
            if a.values.len() != n_points * a.components {
                return Err(input(
                    path,
                    format!(
                        "point array `{name}` has {} values for {n_points} points",
                        a.values.len()
                    ),
                ));
            }
        }
        Ok(VtuFile {
            points,
            triangles,
            point_data,
            cell_data,
        })
    }

    /// The mesh with its `Metric` point array: 4 components (a row-major 2x2 matrix,
    /// which must be symmetric) or 3 (`M11, M12, M22`).
    pub fn mesh(&self, path: &Path) -> Result<Mesh, MeshError> {
        let m = self.point_data.get("Metric").ok_or_else(|| {
            let names: Vec<&str> = self.point_data.keys().map(String::as_str).collect();
            input(
                path,
                format!("no point array `Metric` (point arrays: {}); the metric tensor per vertex is needed", names.join(", ")),
            )
        })?;
        let metric = match m.components {
            4 => m
                .values
                .chunks(4)
                .enumerate()
                .map(|(v, c)| {
                    let scale = c.iter().fold(0f64, |s, x| s.max(x.abs()));
                    if (c[1] - c[2]).abs() > 1e-9 * scale {
                        return Err(MeshError::Invalid(format!(
                            "the metric at vertex {v} is not symmetric: M12 = {}, M21 = {}",
                            c[1], c[2]
                        )));
                    }
                    Ok(Metric {
                        a: c[0],
                        b: 0.5 * (c[1] + c[2]),
                        c: c[3],
                    })
                })
                .collect::<Result<Vec<_>, _>>()?,
            3 => m
                .values
                .chunks(3)
                .map(|c| Metric {
                    a: c[0],
                    b: c[1],
                    c: c[2],
                })
                .collect(),
            k => {
                return Err(input(
                    path,
                    format!("`Metric` has {k} components: 4 (2x2) or 3 (M11, M12, M22) expected"),
                ))
            }
        };
        Mesh::new(self.points.clone(), self.triangles.clone(), metric)
    }
}

/// Reads a mesh with its metric from a `.vtu` file.
pub fn read_mesh(path: &Path) -> Result<Mesh, MeshError> {
    VtuFile::read(path)?.mesh(path)
}

/// The bytes per value of a VTK type name.
fn type_size(t: &str) -> Option<usize> {
    Some(match t {
        "Int8" | "UInt8" => 1,
        "Int16" | "UInt16" => 2,
        "Int32" | "UInt32" | "Float32" => 4,
        "Int64" | "UInt64" | "Float64" => 8,
        _ => return None,
    })
}

/// Little-endian values of type `t` as `f64`.
fn convert(t: &str, bytes: &[u8]) -> Vec<f64> {
    let size = type_size(t).unwrap_or(1);
    bytes
        .chunks_exact(size)
        .map(|b| {
            let mut w = [0u8; 8];
            w[..size].copy_from_slice(b);
            match t {
                "Float32" => f32::from_le_bytes([b[0], b[1], b[2], b[3]]) as f64,
                "Float64" => f64::from_le_bytes(w),
                "Int8" => b[0] as i8 as f64,
                "Int16" => i16::from_le_bytes([b[0], b[1]]) as f64,
                "Int32" => i32::from_le_bytes([b[0], b[1], b[2], b[3]]) as f64,
                "Int64" => i64::from_le_bytes(w) as f64,
                _ => u64::from_le_bytes(w) as f64,
            }
        })
        .collect()
}

fn read_array(path: &Path, a: &roxmltree::Node, enc: &Encoding) -> Result<Array, MeshError> {
    let name = a.attribute("Name").unwrap_or("?");
    let bad = |m: String| input(path, format!("array `{name}`: {m}"));
    let t = a.attribute("type").unwrap_or("");
    type_size(t).ok_or_else(|| bad(format!("type `{t}` is not supported")))?;
    let components = a
        .attribute("NumberOfComponents")
        .map_or(Ok(1), |c| c.trim().parse())
        .map_err(|_| bad("bad NumberOfComponents".into()))?;
    let values = match a.attribute("format").unwrap_or("ascii") {
        "ascii" => a
            .text()
            .unwrap_or("")
            .split_whitespace()
            .map(|x| {
                x.parse::<f64>()
                    .map_err(|_| bad(format!("`{x}` is not a number")))
            })
            .collect::<Result<Vec<_>, _>>()?,
        "binary" => convert(t, &decode(a.text().unwrap_or("").trim(), enc).map_err(bad)?),
        "appended" => {
            let data = enc.appended.ok_or_else(|| bad("no AppendedData".into()))?;
            let offset: usize = a
                .attribute("offset")
                .and_then(|o| o.trim().parse().ok())
                .ok_or_else(|| bad("no valid offset".into()))?;
            let from = data
                .get(offset..)
                .ok_or_else(|| bad(format!("offset {offset} is past the appended data")))?;
            convert(t, &decode(from, enc).map_err(bad)?)
        }
        other => return Err(bad(format!("format `{other}` is not supported"))),
    };
    Ok(Array { components, values })
}

/// Decodes one base64 array from the start of `text`: a header, then the data, zlib
/// blocks when compressed. Returns the raw bytes.
fn decode(text: &str, enc: &Encoding) -> Result<Vec<u8>, String> {
    let b64 = base64::engine::general_purpose::STANDARD;
    let chars = |bytes: usize| bytes.div_ceil(3) * 4;
    let take = |n: usize| -> Result<Vec<u8>, String> {
        let s = text.get(..n).ok_or("the data ends early")?;
        b64.decode(s).map_err(|e| format!("bad base64: {e}"))
    };
    let number = |b: &[u8], i: usize| -> usize {
        let mut w = [0u8; 8];
        w[..enc.header].copy_from_slice(&b[i * enc.header..(i + 1) * enc.header]);
        u64::from_le_bytes(w) as usize
    };
    if !enc.compressed {
        // The header (the byte count) and the data, encoded separately.
        let head = take(chars(enc.header))?;
        let bytes = number(&head, 0);
        let skip = chars(enc.header);
        let rest = text
            .get(skip..skip + chars(bytes))
            .ok_or("the data ends early")?;
        let mut data = b64.decode(rest).map_err(|e| format!("bad base64: {e}"))?;
        data.truncate(bytes);
        return Ok(data);
    }
    let first = take(chars(enc.header))?;
    let blocks = number(&first, 0);
    let head_bytes = enc.header * (3 + blocks);
    let head = take(chars(head_bytes))?;
    let sizes: Vec<usize> = (0..blocks).map(|k| number(&head, 3 + k)).collect();
    let total: usize = sizes.iter().sum();
    let skip = chars(head_bytes);
    let body = text
        .get(skip..skip + chars(total))
        .ok_or("the compressed data ends early")?;
    let packed = b64.decode(body).map_err(|e| format!("bad base64: {e}"))?;
    let mut out = Vec::new();
    let mut at = 0;
    for s in sizes {
        let block = packed
            .get(at..at + s)
            .ok_or("a compressed block ends early")?;
        flate2::read::ZlibDecoder::new(block)
            .read_to_end(&mut out)
            .map_err(|e| format!("bad zlib data: {e}"))?;
        at += s;
    }
    Ok(out)
}

/// Writes `mesh` as an ASCII `.vtu` with its metric (3 components) and `cell_data`.
pub fn write(path: &Path, mesh: &Mesh, cell_data: &[(&str, &[f64])]) -> Result<(), MeshError> {
    use std::fmt::Write as _;
    let mut s = String::new();
    let (np, nc) = (mesh.points.len(), mesh.triangles.len());
    let _ = writeln!(s, "<?xml version=\"1.0\"?>\n<VTKFile type=\"UnstructuredGrid\" version=\"0.1\" byte_order=\"LittleEndian\">\n<UnstructuredGrid>\n<Piece NumberOfPoints=\"{np}\" NumberOfCells=\"{nc}\">");
    let _ = writeln!(s, "<PointData>\n<DataArray type=\"Float64\" Name=\"Metric\" NumberOfComponents=\"3\" format=\"ascii\">");
    for m in &mesh.metric {
        let _ = writeln!(s, "{} {} {}", m.a, m.b, m.c);
    }
    let _ = writeln!(s, "</DataArray>\n</PointData>\n<CellData>");
    for (name, values) in cell_data {
        let _ = writeln!(
            s,
            "<DataArray type=\"Float64\" Name=\"{name}\" format=\"ascii\">"
        );
        for v in values.iter() {
            let _ = writeln!(s, "{v}");
        }
        let _ = writeln!(s, "</DataArray>");
    }
    let _ = writeln!(s, "</CellData>\n<Points>\n<DataArray type=\"Float64\" NumberOfComponents=\"3\" format=\"ascii\">");
    for p in &mesh.points {
        let _ = writeln!(s, "{} {} 0", p[0], p[1]);
    }
    let _ = writeln!(s, "</DataArray>\n</Points>\n<Cells>\n<DataArray type=\"Int64\" Name=\"connectivity\" format=\"ascii\">");
    for t in &mesh.triangles {
        let _ = writeln!(s, "{} {} {}", t[0], t[1], t[2]);
    }
    let _ = writeln!(
        s,
        "</DataArray>\n<DataArray type=\"Int64\" Name=\"offsets\" format=\"ascii\">"
    );
    for k in 0..nc {
        let _ = writeln!(s, "{}", 3 * (k + 1));
    }
    let _ = writeln!(
        s,
        "</DataArray>\n<DataArray type=\"UInt8\" Name=\"types\" format=\"ascii\">"
    );
    for _ in 0..nc {
        let _ = writeln!(s, "{VTK_TRIANGLE}");
    }
    let _ = writeln!(
        s,
        "</DataArray>\n</Cells>\n</Piece>\n</UnstructuredGrid>\n</VTKFile>"
    );
    std::fs::write(path, s).map_err(|e| input(path, format!("cannot write it: {e}")))
}
