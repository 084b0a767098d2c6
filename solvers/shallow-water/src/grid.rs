//! The uniform grid of cells and the bed over it.

use crate::FloodError;

/// A uniform grid of `nx x ny` cells of `dx x dy`, its lower-left corner at `(x0, y0)`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Grid {
    /// Cells along x.
    pub nx: usize,
    /// Cells along y.
    pub ny: usize,
    /// Cell width (m).
    pub dx: f64,
    /// Cell height (m).
    pub dy: f64,
    /// The x of the grid's west edge.
    pub x0: f64,
    /// The y of the grid's south edge.
    pub y0: f64,
}

impl Grid {
    /// A grid covering `[x0, x0 + nx dx] x [y0, y0 + ny dy]`; checks the sizes.
    pub fn new(
        nx: usize,
        ny: usize,
        dx: f64,
        dy: f64,
        x0: f64,
        y0: f64,
    ) -> Result<Grid, FloodError> {
        let bad = |name: &str, value: String, expected: &str| FloodError::Config {
            name: name.into(),
            value,
            expected: expected.into(),
        };
        if nx == 0 || ny == 0 {
            return Err(bad(
                "grid",
                format!("{nx} x {ny}"),
                "at least one cell along each axis",
            ));
        }
        // The bed's `(nx + 1) x (ny + 1)` corners in `f64` must be addressable.
        let corners = (nx.checked_add(1))
            .zip(ny.checked_add(1))
            .and_then(|(a, b)| a.checked_mul(b))
            .and_then(|c| c.checked_mul(std::mem::size_of::<f64>()))
            .filter(|&bytes| bytes <= isize::MAX as usize);
        if corners.is_none() {
            return Err(bad(
                "grid",
                format!("{nx} x {ny}"),
                "a grid whose cells a machine can hold (fewer cells along each axis)",
            ));
        }
        for (name, d) in [("dx", dx), ("dy", dy)] {
            if !(d.is_finite() && d > 0.0) {
                return Err(bad(name, d.to_string(), "a finite cell size above 0"));
            }
        }
        if !(x0.is_finite() && y0.is_finite()) {
            return Err(bad("origin", format!("({x0}, {y0})"), "finite coordinates"));
        }
        Ok(Grid {
            nx,
            ny,
            dx,
            dy,
            x0,
            y0,
        })
    }

    /// The centre of cell `(i, j)`.
    pub fn centre(&self, i: usize, j: usize) -> (f64, f64) {
        (
            self.x0 + (i as f64 + 0.5) * self.dx,
            self.y0 + (j as f64 + 0.5) * self.dy,
        )
    }

    /// The cell holding the point `(x, y)`, if the grid covers it.
    pub fn cell_at(&self, x: f64, y: f64) -> Option<(usize, usize)> {
        let i = ((x - self.x0) / self.dx).floor();
        let j = ((y - self.y0) / self.dy).floor();
        let inside = i >= 0.0 && j >= 0.0 && (i as usize) < self.nx && (j as usize) < self.ny;
        inside.then_some((i as usize, j as usize))
    }

    /// The number of cells.
    pub fn cells(&self) -> usize {
        self.nx * self.ny
    }

    /// An error naming `what` unless `count` is one value per cell.
    pub fn check_cells(&self, what: &str, count: usize) -> Result<(), FloodError> {
        if count == self.cells() {
            return Ok(());
        }
        Err(FloodError::Config {
            name: what.into(),
            value: format!("{count} values"),
            expected: format!("one per cell ({} x {})", self.nx, self.ny),
        })
    }

    /// The error for a probed cell `(i, j)` that is not one of the grid's.
    pub(crate) fn not_a_cell(&self, i: usize, j: usize) -> FloodError {
        FloodError::Config {
            name: "probed cell".into(),
            value: format!("({i}, {j})"),
            expected: format!("a cell of the {} x {} grid", self.nx, self.ny),
        }
    }

    /// The area of one cell.
    pub fn cell_area(&self) -> f64 {
        self.dx * self.dy
    }
}

/// An empty vector with room for the corners of `grid`, or an error where the memory
/// cannot be had (`Vec::with_capacity` would abort the process).
fn corner_vec(grid: &Grid) -> Result<Vec<f64>, FloodError> {
    // `Grid::new` checked that the count does not overflow.
    let count = (grid.nx + 1) * (grid.ny + 1);
    let mut corners = Vec::new();
    corners
        .try_reserve_exact(count)
        .map_err(|_| stencil_runtime::Error::HostOutOfMemory {
            bytes: count * std::mem::size_of::<f64>(),
            what: format!("the bed of {} x {} cells", grid.nx, grid.ny),
        })?;
    Ok(corners)
}

/// The bed elevation, continuous and bilinear in each cell: its values at the
/// `(nx + 1) x (ny + 1)` cell corners (KP07 section 3).
#[derive(Clone, Debug, PartialEq)]
pub struct Terrain {
    grid: Grid,
    corners: Vec<f64>,
}

impl Terrain {
    /// The bed `z(x, y)` sampled at the corners.
    pub fn from_fn(grid: Grid, z: impl Fn(f64, f64) -> f64) -> Result<Terrain, FloodError> {
        let mut corners = corner_vec(&grid)?;
        for j in 0..=grid.ny {
            for i in 0..=grid.nx {
                corners.push(z(
                    grid.x0 + i as f64 * grid.dx,
                    grid.y0 + j as f64 * grid.dy,
                ));
            }
        }
        Terrain::check(grid, corners)
    }

    /// The bed from values at the cell centres (an ESRI grid's samples, row `j` from the
    /// south, `nx` values each): each corner takes the mean of the (up to four) centres
    /// around it, so the mean of a cell's corners is a smoothed copy of its sample.
    pub fn from_cell_centres(grid: Grid, centres: &[f64]) -> Result<Terrain, FloodError> {
        if centres.len() != grid.cells() {
            return Err(FloodError::Config {
                name: "terrain".into(),
                value: format!("{} values", centres.len()),
                expected: "one value per cell".into(),
            });
        }
        let (nx, ny) = (grid.nx as isize, grid.ny as isize);
        let mut corners = corner_vec(&grid)?;
        for j in 0..=ny {
            for i in 0..=nx {
                let (mut sum, mut count) = (0.0, 0.0);
                for (a, b) in [(i - 1, j - 1), (i, j - 1), (i - 1, j), (i, j)] {
                    if (0..nx).contains(&a) && (0..ny).contains(&b) {
                        sum += centres[(b * nx + a) as usize];
                        count += 1.0;
                    }
                }
                corners.push(sum / count);
            }
        }
        Terrain::check(grid, corners)
    }

    fn check(grid: Grid, corners: Vec<f64>) -> Result<Terrain, FloodError> {
        if let Some(k) = corners.iter().position(|z| !z.is_finite()) {
            let (i, j) = (k % (grid.nx + 1), k / (grid.nx + 1));
            return Err(FloodError::Config {
                name: "terrain".into(),
                value: format!("{} at corner ({i}, {j})", corners[k]),
                expected: "a finite bed elevation everywhere".into(),
            });
        }
        Ok(Terrain { grid, corners })
    }

    /// The grid the bed covers.
    pub fn grid(&self) -> &Grid {
        &self.grid
    }

    /// The bed at corner `(i, j)`, `0 <= i <= nx`, `0 <= j <= ny`.
    pub fn corner(&self, i: usize, j: usize) -> f64 {
        self.corners[j * (self.grid.nx + 1) + i]
    }

    /// The bed's mean over cell `(i, j)` (the mean of its corners).
    pub fn cell(&self, i: usize, j: usize) -> f64 {
        0.25 * (self.corner(i, j)
            + self.corner(i + 1, j)
            + self.corner(i, j + 1)
            + self.corner(i + 1, j + 1))
    }

    /// Every cell's mean bed, row by row from the south.
    pub fn cells(&self) -> Vec<f64> {
        let g = &self.grid;
        (0..g.ny)
            .flat_map(|j| (0..g.nx).map(move |i| (i, j)))
            .map(|(i, j)| self.cell(i, j))
            .collect()
    }
}
