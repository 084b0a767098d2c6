//! `sw-ranks-check`: see [`shallow_water::programs::ranks_check`].

fn main() {
    shallow_water::programs::ranks_check::main()
}
