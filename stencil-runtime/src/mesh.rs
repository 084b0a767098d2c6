//! Unstructured triangle meshes for vertex kernels.
//!
//! A vertex kernel (a `#[stencil]` function with a `mesh: Mesh` parameter) runs once per
//! vertex of a [`VertexSet`] and reads its neighbours and triangles from the set's
//! [`MeshTopology`]: the vertex-to-vertex adjacency and the vertex-to-triangle lists, both
//! in CSR form. A set is checked to be independent (no two of its vertices share an edge)
//! when it is made, so a kernel that writes its own vertex and reads its neighbours is
//! free of races on every backend.

use crate::cuda::memory::DeviceBuffer;
use crate::{Backend, Error};
use std::sync::Arc;

/// The tables of a mesh, host copies (see [`crate::cpu::MeshView`] for their meaning).
#[derive(Debug)]
struct Tables {
    neighbour_start: Vec<u32>,
    neighbours: Vec<u32>,
    triangle_start: Vec<u32>,
    corners: Vec<u32>,
}

/// Device copies of the tables.
#[derive(Debug)]
struct DeviceTables {
    ordinal: usize,
    neighbour_start: DeviceBuffer,
    neighbours: DeviceBuffer,
    triangle_start: DeviceBuffer,
    corners: DeviceBuffer,
}

/// The connectivity of a triangle mesh: for each vertex its neighbours (ascending) and
/// its triangles, each given by the two corners that follow the vertex counter-clockwise.
/// Built once, on the host, and copied to a device with [`MeshTopology::to`].
#[derive(Debug)]
pub struct MeshTopology {
    vertices: usize,
    triangles: usize,
    host: Tables,
    device: Option<DeviceTables>,
}

fn invalid(msg: String) -> Error {
    Error::Mesh(msg)
}

impl MeshTopology {
    /// The topology of `vertices` vertices joined by `triangles` (corners counter-clockwise).
    /// Fails, naming the first offending triangle, when a corner is not a vertex or a
    /// triangle repeats a corner.
    pub fn new(vertices: usize, triangles: &[[usize; 3]]) -> Result<Arc<MeshTopology>, Error> {
        if vertices >= u32::MAX as usize {
            return Err(invalid(format!(
                "{vertices} vertices are more than a mesh table can number (2^32 - 1)"
            )));
        }
        for (k, t) in triangles.iter().enumerate() {
            if let Some(&c) = t.iter().find(|&&c| c >= vertices) {
                return Err(invalid(format!(
                    "triangle {k} has corner {c}, but the mesh has {vertices} vertices"
                )));
            }
            if t[0] == t[1] || t[1] == t[2] || t[0] == t[2] {
                return Err(invalid(format!("triangle {k} repeats a corner: {t:?}")));
            }
        }
        // Triangle lists: each triangle once per corner.
        let mut triangle_start = vec![0u32; vertices + 1];
        for t in triangles {
            for &c in t {
                triangle_start[c + 1] += 1;
            }
        }
        for v in 0..vertices {
            triangle_start[v + 1] += triangle_start[v];
        }
        let mut fill: Vec<u32> = triangle_start[..vertices].to_vec();
        let mut corners = vec![0u32; 2 * 3 * triangles.len()];
        for t in triangles {
            for i in 0..3 {
                let v = t[i];
                let p = fill[v] as usize;
                fill[v] += 1;
                corners[2 * p] = t[(i + 1) % 3] as u32;
                corners[2 * p + 1] = t[(i + 2) % 3] as u32;
            }
        }
        // Neighbours: the other corners of the vertex's triangles, sorted, without repeats.
        let mut neighbour_start = vec![0u32; vertices + 1];
        let mut neighbours = Vec::with_capacity(3 * triangles.len());
        let mut row: Vec<u32> = Vec::new();
        for v in 0..vertices {
            row.clear();
            let (a, b) = (triangle_start[v] as usize, triangle_start[v + 1] as usize);
            row.extend_from_slice(&corners[2 * a..2 * b]);
            row.sort_unstable();
            row.dedup();
            neighbours.extend_from_slice(&row);
            neighbour_start[v + 1] = neighbours.len() as u32;
        }
        Ok(Arc::new(MeshTopology {
            vertices,
            triangles: triangles.len(),
            host: Tables {
                neighbour_start,
                neighbours,
                triangle_start,
                corners,
            },
            device: None,
        }))
    }

    /// The number of vertices.
    pub fn vertices(&self) -> usize {
        self.vertices
    }

    /// The number of triangles.
    pub fn triangles(&self) -> usize {
        self.triangles
    }

    /// The neighbours of `v`, ascending.
    pub fn neighbours_of(&self, v: usize) -> &[u32] {
        let t = &self.host;
        &t.neighbours[t.neighbour_start[v] as usize..t.neighbour_start[v + 1] as usize]
    }

    /// A copy whose tables are also in the memory of `backend` (the same on the CPU).
    pub fn to(self: &Arc<Self>, backend: &Backend) -> Result<Arc<MeshTopology>, Error> {
        let Backend::Cuda(cuda) = backend else {
            return Ok(self.clone());
        };
        if self.device.as_ref().map(|d| d.ordinal) == Some(cuda.ordinal()) {
            return Ok(self.clone());
        }
        let s = cuda.stream();
        let h = &self.host;
        let device = DeviceTables {
            ordinal: cuda.ordinal(),
            neighbour_start: DeviceBuffer::from_slice(
                s,
                &h.neighbour_start,
                "mesh neighbour offsets",
            )?,
            neighbours: DeviceBuffer::from_slice(s, &h.neighbours, "mesh neighbours")?,
            triangle_start: DeviceBuffer::from_slice(
                s,
                &h.triangle_start,
                "mesh triangle offsets",
            )?,
            corners: DeviceBuffer::from_slice(s, &h.corners, "mesh triangle corners")?,
        };
        Ok(Arc::new(MeshTopology {
            vertices: self.vertices,
            triangles: self.triangles,
            host: Tables {
                neighbour_start: h.neighbour_start.clone(),
                neighbours: h.neighbours.clone(),
                triangle_start: h.triangle_start.clone(),
                corners: h.corners.clone(),
            },
            device: Some(device),
        }))
    }

    /// The set of `vertices` of this mesh, to launch vertex kernels on. Fails when a
    /// vertex is out of range, repeated, or shares an edge with another of the set (the
    /// kernels of a set run in parallel and read their neighbours). On a topology with
    /// device tables the set is copied to that device as well.
    pub fn set(self: &Arc<Self>, vertices: &[usize]) -> Result<VertexSet, Error> {
        let mut member = vec![false; self.vertices];
        for &v in vertices {
            if v >= self.vertices {
                return Err(invalid(format!(
                    "vertex {v} of the set is not a vertex of the mesh ({} vertices)",
                    self.vertices
                )));
            }
            if std::mem::replace(&mut member[v], true) {
                return Err(invalid(format!("vertex {v} is in the set twice")));
            }
        }
        for &v in vertices {
            if let Some(&w) = self.neighbours_of(v).iter().find(|&&w| member[w as usize]) {
                return Err(invalid(format!(
                    "vertices {v} and {w} of the set share an edge: a set must be independent (colour the mesh and launch each colour)"
                )));
            }
        }
        let list: Vec<u32> = vertices.iter().map(|&v| v as u32).collect();
        let device = match &self.device {
            Some(d) => {
                let s = d.neighbours.stream.clone();
                Some(DeviceBuffer::from_slice(&s, &list, "a vertex set")?)
            }
            None => None,
        };
        Ok(VertexSet {
            topology: self.clone(),
            vertices: list,
            device,
        })
    }
}

/// An independent set of vertices of a mesh: a vertex kernel's domain.
#[derive(Debug)]
pub struct VertexSet {
    topology: Arc<MeshTopology>,
    vertices: Vec<u32>,
    device: Option<DeviceBuffer>,
}

impl VertexSet {
    /// The mesh.
    pub fn topology(&self) -> &MeshTopology {
        &self.topology
    }

    /// The number of vertices in the set.
    pub fn len(&self) -> usize {
        self.vertices.len()
    }

    /// Whether the set is empty.
    pub fn is_empty(&self) -> bool {
        self.vertices.is_empty()
    }

    /// The set's vertices.
    pub fn vertices(&self) -> &[u32] {
        &self.vertices
    }

    /// The host tables, for the CPU code.
    pub fn cpu_view(&self) -> crate::cpu::MeshView {
        let t = &self.topology.host;
        crate::cpu::MeshView {
            set: self.vertices.as_ptr(),
            neighbour_start: t.neighbour_start.as_ptr(),
            neighbours: t.neighbours.as_ptr(),
            triangle_start: t.triangle_start.as_ptr(),
            corners: t.corners.as_ptr(),
        }
    }

    /// The device addresses of the set and the tables, in the order of a vertex kernel's
    /// parameters, if they are on CUDA device `ordinal`.
    pub(crate) fn device_tables(&self, ordinal: usize) -> Option<[u64; 5]> {
        let d = self
            .topology
            .device
            .as_ref()
            .filter(|d| d.ordinal == ordinal)?;
        let set = self.device.as_ref()?;
        Some([
            set.ptr,
            d.neighbour_start.ptr,
            d.neighbours.ptr,
            d.triangle_start.ptr,
            d.corners.ptr,
        ])
    }

    /// Where the set's tables are, in words.
    pub(crate) fn location(&self) -> String {
        match &self.topology.device {
            Some(d) => format!("CUDA device {}", d.ordinal),
            None => "host memory (make the set from `MeshTopology::to(&backend)`)".into(),
        }
    }
}

/// Checks a field of a vertex kernel: one value per vertex of the set's mesh.
pub fn check_vertex_field<T: crate::Real>(
    kernel: &'static str,
    field_name: &'static str,
    set: &VertexSet,
    field: &crate::Field<T>,
) -> Result<(), Error> {
    let n = set.topology.vertices;
    if field.dims() != 1 || field.extent()[0] != n {
        return Err(Error::Extent {
            kernel,
            field: field_name,
            have: field.extent().to_vec(),
            want: vec![n],
        });
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Two triangles sharing the edge 1-2 of the unit square.
    fn square() -> Arc<MeshTopology> {
        MeshTopology::new(4, &[[0, 1, 2], [1, 3, 2]]).unwrap()
    }

    #[test]
    fn lists_neighbours_and_corners() {
        let m = square();
        assert_eq!(m.neighbours_of(1), &[0, 2, 3]);
        assert_eq!(m.neighbours_of(0), &[1, 2]);
        let t = &m.host;
        // Vertex 2 is in both triangles: (2, 0, 1) and (2, 1, 3) counter-clockwise.
        let p = t.triangle_start[2] as usize;
        assert_eq!(&t.corners[2 * p..2 * p + 4], &[0, 1, 1, 3]);
    }

    #[test]
    fn rejects_bad_triangles_and_dependent_sets() {
        assert!(matches!(
            MeshTopology::new(3, &[[0, 1, 3]]),
            Err(Error::Mesh(m)) if m.contains("triangle 0 has corner 3")
        ));
        assert!(MeshTopology::new(3, &[[0, 1, 1]]).is_err());
        let m = square();
        assert!(m.set(&[0, 3]).is_ok());
        let e = m.set(&[0, 1]).unwrap_err().to_string();
        assert!(e.contains("share an edge"), "{e}");
        assert!(m.set(&[0, 0]).is_err());
        assert!(m.set(&[4]).is_err());
    }
}
