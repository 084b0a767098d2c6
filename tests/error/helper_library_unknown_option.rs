// `#[stencils]` takes only `helpers = [..]`.
use stencil_runtime::prelude::*;

#[stencils(helper = library)]
mod m {}

fn main() {}
