//! `sw-scaling`: see [`shallow_water::programs::scaling`].

fn main() {
    shallow_water::programs::scaling::main()
}
