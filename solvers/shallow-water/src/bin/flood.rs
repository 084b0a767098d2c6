//! `flood`: see [`shallow_water::programs::flood`].

fn main() {
    shallow_water::programs::flood::main()
}
