//! Checks that generated launchers run before touching memory.

use crate::{Element, Error, Field};

/// How a field's grid relates to the domain's (the IR's `IndexMap`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FieldMap {
    /// The domain's grid: the field's extent equals the domain.
    Same,
    /// Twice as fine: domain point `i` reads index `2i + offset`.
    Fine,
    /// Twice as coarse: domain point `i` reads index `floor(i / 2) + offset`.
    Coarse,
}

impl FieldMap {
    fn apply(self, i: i64) -> i64 {
        match self {
            FieldMap::Same => i,
            FieldMap::Fine => 2 * i,
            FieldMap::Coarse => i.div_euclid(2),
        }
    }
}

/// What a launcher knows about one field parameter.
#[derive(Clone, Copy, Debug)]
pub struct FieldSpec {
    /// The parameter's name.
    pub name: &'static str,
    /// The halo the kernel needs on this field.
    pub halo: usize,
    /// The field's grid.
    pub map: FieldMap,
    /// The smallest and largest offsets read per axis.
    pub reach: [(i32, i32); 3],
}

/// Checks a field against the kernel's dimension, domain and the halo it reads.
pub fn check_field<T: Element>(
    kernel: &'static str,
    dims: usize,
    domain: &[usize],
    spec: FieldSpec,
    field: &Field<T>,
) -> Result<(), Error> {
    if field.dims() != dims {
        return Err(Error::Dimensions {
            kernel,
            field: spec.name,
            have: field.dims(),
            want: dims,
        });
    }
    if spec.map != FieldMap::Same {
        return check_coverage(kernel, domain, spec, field);
    }
    if field.extent() != domain {
        return Err(Error::Extent {
            kernel,
            field: spec.name,
            have: field.extent().to_vec(),
            want: domain.to_vec(),
        });
    }
    if field.halo() < spec.halo {
        return Err(Error::Halo {
            kernel,
            field: spec.name,
            have: field.halo(),
            needed: spec.halo,
        });
    }
    Ok(())
}

/// The domain as the three extents generated code takes (1 for unused axes).
pub fn domain3(domain: &[usize]) -> [usize; 3] {
    let mut n = [1; 3];
    n[..domain.len()].copy_from_slice(domain);
    n
}

/// Checks that a field on a finer or coarser grid holds every index the kernel reads.
fn check_coverage<T: Element>(
    kernel: &'static str,
    domain: &[usize],
    spec: FieldSpec,
    field: &Field<T>,
) -> Result<(), Error> {
    let halo = field.halo() as i64;
    for (axis, &n) in domain.iter().enumerate() {
        if n == 0 {
            continue;
        }
        let (lo, hi) = spec.reach[axis];
        let first = spec.map.apply(0) + lo as i64;
        let last = spec.map.apply(n as i64 - 1) + hi as i64;
        let extent = field.extent()[axis];
        if first < -halo || last > extent as i64 - 1 + halo {
            let (map, hint) = match spec.map {
                FieldMap::Fine => (
                    "finer",
                    format!("for a domain of {n} points pass a fine field of 2n-1 = {} (vertex-centred) or 2n = {} (cell-centred) points", 2 * n - 1, 2 * n),
                ),
                _ => (
                    "coarser",
                    format!("for a domain of {n} points pass a coarse field of (n+1)/2 = {} (vertex-centred) or n/2 = {} (cell-centred) points", n.div_ceil(2), n / 2),
                ),
            };
            return Err(Error::Coverage {
                kernel,
                field: spec.name,
                detail: format!(
                    "is read on a {map} grid at indices {first}..={last} along axis {axis}, but it holds {}..={} (extent {extent}, halo {}); {hint}",
                    -halo,
                    extent as i64 - 1 + halo,
                    field.halo()
                ),
            });
        }
    }
    Ok(())
}

/// Checks that an `Axes` parameter holds one value per axis of the kernel.
pub fn check_axes(
    kernel: &'static str,
    param: &'static str,
    given: usize,
    dims: usize,
) -> Result<(), Error> {
    if given == dims {
        Ok(())
    } else {
        Err(Error::Axes {
            kernel,
            param,
            given,
            dims,
        })
    }
}

/// Checks the colour of a red-black kernel: 0 (even index sum) or 1 (odd).
pub fn check_colour(kernel: &'static str, param: &'static str, colour: i64) -> Result<(), Error> {
    if colour == 0 || colour == 1 {
        Ok(())
    } else {
        Err(Error::Parameter {
            kernel,
            param,
            value: colour.to_string(),
            expected:
                "the colour of a red-black kernel is 0 (points with an even index sum) or 1 (odd)",
        })
    }
}
