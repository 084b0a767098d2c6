//! Back ends that do not need LLVM.

pub mod rust;
