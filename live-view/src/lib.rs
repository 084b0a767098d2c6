//! `live-view`: watch a simulation while it runs, in the browser.
//!
//! A program started with `--serve [ADDR]` makes a [`LiveView`] (bound to
//! `127.0.0.1:8080` unless told otherwise) and calls [`LiveView::tick`] once per step.
//! The server, on a thread of its own, serves one page (compiled into the binary) and a
//! WebSocket stream: the run's [`Description`], its [`Status`] a few times a second, and
//! frames of the chosen field downsampled on the device to the page's view
//! ([`Downsampler`], a kernel of the stencil language), about ten a second and never more
//! than a few percent of the run's time. Pages pause and resume the run, pick the field,
//! set the colour range and ask for checkpoints. Only the newest frame is kept: a page
//! that reads slowly, or not at all, skips frames and never slows the run.

mod downsample;
mod http;
mod live;
mod protocol;
mod served;
mod server;
mod shared;
mod watcher;

pub use downsample::Downsampler;
pub use live::{FrameRequest, LiveView, Progress};
pub use protocol::{Command, Description, FieldInfo, Frame, LayerKind, Mark, Palette, Status};
pub use served::{ServedRun, SERVING_AT};
pub use watcher::{Received, Watcher};

use std::net::SocketAddr;

/// The address served when `--serve` names none: this machine only.
pub const DEFAULT_ADDRESS: &str = "127.0.0.1:8080";

/// What can go wrong with a live view.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// The address could not be bound (in use, not this machine's, no permission).
    #[error("the live view cannot serve at {address}: {source} (pick another with --serve 127.0.0.1:PORT)")]
    Bind {
        /// The address asked for.
        address: SocketAddr,
        /// Why.
        source: std::io::Error,
    },
    /// `--serve`'s argument is not an address.
    #[error("--serve {0:?} is not an address such as 127.0.0.1:8080 or [::1]:8080")]
    Address(String),
    /// A frame that cannot be sent as it is.
    #[error("live view frame: {0}")]
    Frame(String),
    /// Making a frame on the backend failed.
    #[error(transparent)]
    Run(#[from] stencil_runtime::Error),
}

/// The address `--serve` asked for: [`DEFAULT_ADDRESS`] when given without a value.
pub fn address(arg: &str) -> Result<SocketAddr, Error> {
    let arg = if arg.is_empty() { DEFAULT_ADDRESS } else { arg };
    arg.parse().map_err(|_| Error::Address(arg.to_string()))
}

/// The `--serve [ADDR]` option of a program that can show its run live (flatten it into
/// the program's clap arguments).
#[derive(Clone, Debug, Default, clap::Args)]
pub struct ServeOption {
    /// Serve a live view of the run at this address (127.0.0.1:8080 when given alone;
    /// other machines reach it only if you name an address of theirs).
    #[arg(long, value_name = "ADDR", num_args = 0..=1, default_missing_value = "")]
    pub serve: Option<String>,
}

impl ServeOption {
    /// The address asked for, if any (a bad one is [`Error::Address`]).
    pub fn address(&self) -> Result<Option<SocketAddr>, Error> {
        self.serve.as_deref().map(address).transpose()
    }
}
