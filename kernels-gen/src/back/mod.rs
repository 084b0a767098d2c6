//! Back ends that do not need LLVM.

pub mod edges;
pub mod rust;
