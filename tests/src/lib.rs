//! Shared kernels and the harness that runs one kernel through every back end.

pub mod bench;
pub mod blocks;
pub mod device;
pub mod dispatch;
pub mod harness;
pub mod kernels;
pub mod meshes;
pub mod ptxas;
pub mod ranks;
