//! A field too large for the machine is a typed error naming its extent, never a panic
//! ("capacity overflow") or an abort ("memory allocation failed").

use stencil_runtime::{Error, Field};

#[test]
fn a_field_beyond_any_allocation_is_too_large() {
    // 2^60 elements of 8 bytes: more bytes than a `Vec` may hold.
    let n = (1usize << 30) + 1;
    match Field::<f64>::zeros(&[n, n], 1) {
        Err(Error::InvalidField(m)) => assert!(m.contains("too large"), "{m}"),
        other => panic!("expected a too-large extent, got {:?}", other.map(|_| ())),
    }
}

#[test]
fn a_field_beyond_host_memory_is_an_error() {
    // 2^62 bytes: addressable, but no machine has them.
    match Field::<f64>::zeros(&[1 << 30, 1 << 29], 0) {
        Err(e @ Error::HostOutOfMemory { .. }) => {
            let m = e.to_string();
            assert!(
                m.contains("out of host memory") && m.contains("extent"),
                "{m}"
            );
        }
        other => panic!("expected out of memory, got {:?}", other.map(|_| ())),
    }
}
