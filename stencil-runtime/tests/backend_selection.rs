//! Choosing a backend: names parse, and a missing GPU is a typed error that says what to
//! do (on machines without one; on a GPU machine the CUDA backend must come up).

use stencil_runtime::{Backend, Error};

#[test]
fn names_parse() {
    assert_eq!(Backend::from_name("cpu").unwrap(), Backend::Cpu);
    assert_eq!(Backend::from_name(" CPU ").unwrap(), Backend::Cpu);
    let e = Backend::from_name("tpu").unwrap_err();
    assert!(e.to_string().contains("cuda:N"), "{e}");
    let e = Backend::from_name("cuda:x").unwrap_err();
    assert!(e.to_string().contains("unknown backend"), "{e}");
}

#[test]
fn cuda_is_available_or_says_why_not() {
    match Backend::cuda(0) {
        Ok(b) => {
            println!("CUDA available: {}", b.name());
            assert!(b.name().starts_with("cuda:0"));
            assert_eq!(Backend::detect(), b, "auto-detection picks device 0");
        }
        Err(e) => {
            println!("no CUDA here: {e}");
            assert!(
                matches!(e, Error::NoDriver(_) | Error::NoDevice { .. }),
                "unexpected error kind: {e:?}"
            );
            assert!(e.to_string().contains("STENCIL_BACKEND=cpu"), "{e}");
            assert_eq!(Backend::detect(), Backend::Cpu, "falls back to the CPU");
        }
    }
}
