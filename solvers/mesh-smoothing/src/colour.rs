//! Graph colouring of the interior vertices into independent sets (no two vertices of a
//! colour share an edge), so that a colour's vertices can move at once.

use crate::Mesh;

/// Independent sets of interior vertices, each ascending.
#[derive(Clone, Debug, PartialEq)]
pub struct Colouring {
    /// The vertices of each colour.
    pub colours: Vec<Vec<usize>>,
}

impl Colouring {
    /// Checks that no edge joins two vertices of one colour and that every interior
    /// vertex has exactly one colour.
    pub fn is_valid(&self, mesh: &Mesh) -> bool {
        let mut colour = vec![usize::MAX; mesh.points.len()];
        for (c, set) in self.colours.iter().enumerate() {
            for &v in set {
                if colour[v] != usize::MAX {
                    return false;
                }
                colour[v] = c;
            }
        }
        (0..mesh.points.len()).all(|v| {
            (mesh.boundary[v] == (colour[v] == usize::MAX))
                && mesh
                    .neighbours_of(v)
                    .iter()
                    .all(|&w| colour[v] == usize::MAX || colour[w] != colour[v])
        })
    }

    fn from_colours(colour: &[usize]) -> Colouring {
        let n = colour
            .iter()
            .filter(|&&c| c != usize::MAX)
            .max()
            .map_or(0, |c| c + 1);
        let mut colours = vec![vec![]; n];
        for (v, &c) in colour.iter().enumerate() {
            if c != usize::MAX {
                colours[c].push(v);
            }
        }
        Colouring { colours }
    }
}

/// The smallest colour not used by `v`'s neighbours.
fn first_free(mesh: &Mesh, colour: &[usize], v: usize) -> usize {
    let used: Vec<usize> = mesh
        .neighbours_of(v)
        .iter()
        .map(|&w| colour[w])
        .filter(|&c| c != usize::MAX)
        .collect();
    (0..).find(|c| !used.contains(c)).unwrap_or(0)
}

/// Greedy colouring in vertex order: each vertex takes the smallest colour its
/// neighbours do not have.
pub fn greedy(mesh: &Mesh) -> Colouring {
    let mut colour = vec![usize::MAX; mesh.points.len()];
    for v in 0..mesh.points.len() {
        if !mesh.boundary[v] {
            colour[v] = first_free(mesh, &colour, v);
        }
    }
    Colouring::from_colours(&colour)
}

/// Jones-Plassmann colouring: in rounds, every uncoloured vertex whose weight (a hash of
/// its index and `seed`) beats those of its uncoloured neighbours takes the smallest free
/// colour; the vertices of a round are independent, so each round runs in parallel.
pub fn jones_plassmann(mesh: &Mesh, seed: u64) -> Colouring {
    use rayon::prelude::*;
    let n = mesh.points.len();
    let weight = |v: usize| {
        // SplitMix64 of the index: distinct, well-mixed weights.
        let mut z = (v as u64)
            .wrapping_add(seed)
            .wrapping_add(0x9e37_79b9_7f4a_7c15);
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        (z ^ (z >> 31), v)
    };
    let mut colour = vec![usize::MAX; n];
    let mut left: Vec<usize> = (0..n).filter(|&v| !mesh.boundary[v]).collect();
    while !left.is_empty() {
        let chosen: Vec<(usize, usize)> = left
            .par_iter()
            .filter(|&&v| {
                mesh.neighbours_of(v)
                    .iter()
                    .all(|&w| mesh.boundary[w] || colour[w] != usize::MAX || weight(w) < weight(v))
            })
            .map(|&v| (v, first_free(mesh, &colour, v)))
            .collect();
        for &(v, c) in &chosen {
            colour[v] = c;
        }
        left.retain(|&v| colour[v] == usize::MAX);
    }
    Colouring::from_colours(&colour)
}
