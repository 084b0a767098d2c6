//! The package's programs (`flood`, `sw-scaling`, `sw-ranks-check`): each binary in
//! `src/bin` only calls its program's `main` here. A program that picks its precision at
//! run time uses the solver at both, and release builds do not share a library's generic
//! instances with the binaries that use them: written in the binaries, the programs
//! compiled the solver again in each (15, 11 and 7 s of a clean release build on 2
//! cores). Here the library compiles it once for all three.

pub mod flood;
pub mod ranks_check;
pub mod scaling;
