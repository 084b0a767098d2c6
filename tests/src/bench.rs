//! What the benchmarks share: their result type and their command-line options.

/// A benchmark's result: any error ends it with its message.
pub type R<T> = Result<T, Box<dyn std::error::Error>>;

/// The value after option `name` on the command line (`--sizes 4096,8192`), if given.
pub fn arg(name: &str) -> Option<String> {
    let args: Vec<String> = std::env::args().collect();
    args.iter()
        .position(|a| a == name)
        .and_then(|i| args.get(i + 1).cloned())
}
