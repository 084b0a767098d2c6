//! The parameter types of the stencil language.
//!
//! They appear only in `#[stencil]` signatures, which the macro consumes; they exist so
//! that the signatures name documented types. See `docs/language.md`.

use std::marker::PhantomData;

/// An input field, read at constant offsets: `u[(-1, 0)]`; a bare `u` is the centre.
pub struct In<T>(PhantomData<T>);
/// An output field, written once at the current point: `out = value;`.
pub struct Out<T>(PhantomData<T>);
/// A field updated in place: read at the centre (in a red-black kernel also at odd
/// offsets, the other colour), written at the centre; points a path does not assign keep
/// their value.
pub struct InOut<T>(PhantomData<T>);
/// An input on the grid twice as fine as the domain: point `i` reads `2i + offset`
/// (restriction).
pub struct Fine<T>(PhantomData<T>);
/// An input on the grid twice as coarse as the domain: point `i` reads
/// `floor(i / 2) + offset` (prolongation).
pub struct Coarse<T>(PhantomData<T>);
/// A fused sum reduction: `total.reduce(value);`; the launch returns the sum.
pub struct Sum<T>(PhantomData<T>);
/// A fused max reduction: `speed.reduce(value);`; the launch returns the maximum.
pub struct Max<T>(PhantomData<T>);
/// A fused min reduction: `low.reduce(value);`; the launch returns the minimum.
pub struct Min<T>(PhantomData<T>);
/// A vertex kernel's mesh: the kernel runs once per vertex of the set it is launched on,
/// reads fields at the vertex (`x`) and at vertices from the mesh (`x[j]`), and loops over
/// `mesh.neighbours()` and `mesh.triangles()` (corners by `mesh.corner(t, k)`).
pub struct Mesh;
/// A 2D grid of samples read at any position by bilinear interpolation: `g.sample(x, y)`
/// (positions outside the grid read its edge). Launched with a
/// [`crate::SampledGrid`]; on the GPU optionally through a texture with hardware filtering.
pub struct Sampled<T>(PhantomData<T>);
