//! Checks that generated launchers run before touching memory.

use crate::{Error, Field, Real};

/// What a launcher knows about one field parameter.
#[derive(Clone, Copy, Debug)]
pub struct FieldSpec {
    /// The parameter's name.
    pub name: &'static str,
    /// The halo the kernel needs on this field.
    pub halo: usize,
}

/// Checks a field against the kernel's dimension, domain and the halo it reads.
pub fn check_field<T: Real>(
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
