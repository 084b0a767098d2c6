//! Runs each of the six kernels a few times on the default backend and prints a checksum
//! of each result: the program whose rebuild `benchmarks/rebuild.sh` times.
//!
//! ```text
//! cargo run --release -p six-kernels -- 512
//! ```

use six_kernels::kernels;
use stencil_runtime::prelude::*;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let n: usize = match std::env::args().nth(1) {
        Some(s) => s
            .parse()
            .map_err(|_| format!("the grid size must be a positive integer, not `{s}`"))?,
        None => 256,
    };
    if n < 4 {
        return Err(format!("the grid size must be at least 4 (got {n})").into());
    }
    let backend = Backend::auto()?;
    let wave = |p: [isize; 3]| ((p[0] as f64 * 0.1).sin() * (p[1] as f64 * 0.07).cos()).abs();
    let u = Field::<f64>::from_fn(&[n, n], 2, wave).to(&backend)?;
    let k = Field::<f64>::from_fn(&[n, n], 1, |p| 1.0 + wave(p)).to(&backend)?;
    let u3 = Field::<f64>::from_fn(&[n / 4, n / 4, n / 4], 1, wave).to(&backend)?;
    let mut out = Field::<f64>::zeros_on(&backend, &[n, n], 0)?;
    let mut out3 = Field::<f64>::zeros_on(&backend, &[n / 4, n / 4, n / 4], 0)?;
    let sum = |f: &Field<f64>| -> Result<f64, stencil_runtime::Error> {
        Ok(f.to_host()?.interior()?.iter().sum())
    };
    kernels::heat_step::launch(&backend, &u, &mut out, 0.2)?;
    println!("heat_step          {:.6e}", sum(&out)?);
    kernels::limited_advection::launch(&backend, &u, &mut out, 0.4)?;
    println!("limited_advection  {:.6e}", sum(&out)?);
    let largest = kernels::sobel::launch(&backend, &u, &mut out)?;
    println!(
        "sobel              {:.6e} (largest {largest:.4})",
        sum(&out)?
    );
    kernels::harmonic_diffusion::launch(&backend, &u, &k, &mut out, 0.1)?;
    println!("harmonic_diffusion {:.6e}", sum(&out)?);
    kernels::box27::launch(&backend, &u3, &mut out3)?;
    println!("box27              {:.6e}", sum(&out3)?);
    kernels::leapfrog::launch(&backend, &u, &k, &mut out, 0.3)?;
    println!("leapfrog           {:.6e}", sum(&out)?);
    Ok(())
}
