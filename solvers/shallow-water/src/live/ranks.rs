//! [`Live`]: the live view of a run on one rank or over several. Rank 0 serves the pages;
//! whatever it does for them that needs the flow (a frame, a checkpoint) it first tells
//! the other ranks, which wait for its word at every tick and do their part: each draws
//! its own blocks, and the downsampled layers are summed over the ranks (a halving takes
//! means, so the sum of the ranks' layers is the layer of the whole flow, up to rounding).

use super::{Layers, Painter};
use crate::{FloodError, Flow};
use live_view::{Frame, FrameRequest, LiveView, Progress};
use std::net::SocketAddr;
use std::sync::Arc;
use stencil_ranks::{Op, Ranks};
use stencil_runtime::Real;

/// The live view of a run, as this process takes part in it.
pub enum Live<T: Real> {
    /// No live view.
    Off,
    /// This process serves the pages (the only rank, or rank 0 of several).
    Serving(Box<Served<T>>),
    /// A rank other than 0 of a served run: it does what rank 0 tells it.
    Following {
        /// This rank's fields for frames (boxed, as the served view is).
        painter: Box<Painter<T>>,
        /// The ranks.
        ranks: Arc<Ranks>,
    },
}

/// The serving side ([`Live::Serving`]): the view, its painter and, over several ranks,
/// the ranks it speaks for.
pub struct Served<T: Real> {
    view: LiveView,
    painter: Painter<T>,
    ranks: Option<Arc<Ranks>>,
}

/// What rank 0 tells the other ranks, in the order it happens.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Word {
    /// Draw your part of this frame.
    Frame(FrameRequest),
    /// Take part in writing a checkpoint.
    Checkpoint,
    /// The tick is over: go on stepping.
    Done,
}

/// A [`Word`]'s size on the wire.
const WORD_BYTES: usize = 16;

impl Word {
    fn encode(self) -> [u8; WORD_BYTES] {
        let mut b = [0u8; WORD_BYTES];
        match self {
            Word::Frame(r) => {
                b[0] = 1;
                b[1] = u8::from(r.full);
                b[4..8].copy_from_slice(&(r.field as u32).to_le_bytes());
                b[8..12].copy_from_slice(&(r.view[0] as u32).to_le_bytes());
                b[12..16].copy_from_slice(&(r.view[1] as u32).to_le_bytes());
            }
            Word::Checkpoint => b[0] = 2,
            Word::Done => b[0] = 3,
        }
        b
    }

    fn decode(b: [u8; WORD_BYTES]) -> Result<Word, FloodError> {
        let number = |at: usize| {
            let mut n = [0u8; 4];
            n.copy_from_slice(&b[at..at + 4]);
            u32::from_le_bytes(n) as usize
        };
        match b[0] {
            1 => Ok(Word::Frame(FrameRequest {
                field: number(4),
                view: [number(8), number(12)],
                full: b[1] != 0,
            })),
            2 => Ok(Word::Checkpoint),
            3 => Ok(Word::Done),
            other => Err(FloodError::Config {
                name: "the live view's word from rank 0".into(),
                value: other.to_string(),
                expected: "1 (frame), 2 (checkpoint) or 3 (done)".into(),
            }),
        }
    }

    /// Rank 0 tells every other rank.
    fn tell(self, ranks: &Ranks) {
        ranks.broadcast(0, &mut self.encode());
    }

    /// What rank 0 tells.
    fn hear(ranks: &Ranks) -> Result<Word, FloodError> {
        let mut b = [0u8; WORD_BYTES];
        ranks.broadcast(0, &mut b);
        Word::decode(b)
    }
}

impl<T: Real> Live<T> {
    /// The live view of `flow` on this process: served at `address` by the only rank or
    /// rank 0 (which prints where), followed by the other ranks; [`Live::Off`] without an
    /// address. `describe` gives the page's description (rank 0 only calls it), `shade`
    /// is the terrain's hillshade. Every rank must call it at the same point.
    pub fn start(
        address: Option<SocketAddr>,
        flow: &Flow<T>,
        ranks: Option<&Arc<Ranks>>,
        describe: impl FnOnce() -> live_view::Description,
        shade: &[f64],
    ) -> Result<Live<T>, FloodError> {
        let Some(address) = address else {
            return Ok(Live::Off);
        };
        let ranks = ranks.filter(|r| r.size() > 1).cloned();
        match ranks {
            Some(ranks) if ranks.rank() > 0 => Ok(Live::Following {
                painter: Box::new(Painter::new(flow, None)?),
                ranks,
            }),
            ranks => {
                let painter = Painter::new(flow, Some(shade))?;
                let view = LiveView::serve(address, &describe())?;
                println!("{}{}/", live_view::SERVING_AT, view.address());
                Ok(Live::Serving(Box::new(Served {
                    view,
                    painter,
                    ranks,
                })))
            }
        }
    }

    /// Once per few steps, on every rank: rank 0 updates the pages, draws a frame when
    /// one is due and writes a checkpoint with `checkpoint` when a page asks (waiting
    /// while a page holds the run paused); the other ranks do their part of each.
    pub fn tick(
        &mut self,
        flow: &Flow<T>,
        progress: Progress,
        checkpoint: impl FnMut() -> Result<String, FloodError>,
    ) -> Result<(), FloodError> {
        match self {
            Live::Off => Ok(()),
            Live::Serving(served) => served.tick(flow, progress, checkpoint),
            Live::Following { painter, ranks } => follow(painter, flow, ranks, checkpoint),
        }
    }

    /// At the end of the run, on every rank: the pages get the last frame and hear that
    /// the run has finished.
    pub fn finish(&mut self, flow: &Flow<T>, progress: Progress) -> Result<(), FloodError> {
        let no_checkpoint = || {
            Err(FloodError::Config {
                name: "the live view's last word".into(),
                value: "a checkpoint".into(),
                expected: "a frame or the end".into(),
            })
        };
        match self {
            Live::Off => Ok(()),
            Live::Serving(served) => served.finish(flow, progress),
            Live::Following { painter, ranks } => follow(painter, flow, ranks, no_checkpoint),
        }
    }
}

impl<T: Real> Served<T> {
    /// Rank 0's tick: [`LiveView::tick`], with frames drawn over the ranks and the ranks
    /// told of a checkpoint before it is written.
    fn tick(
        &mut self,
        flow: &Flow<T>,
        progress: Progress,
        mut checkpoint: impl FnMut() -> Result<String, FloodError>,
    ) -> Result<(), FloodError> {
        let (painter, ranks) = (&mut self.painter, self.ranks.as_deref());
        let write = || {
            if let Some(ranks) = ranks {
                Word::Checkpoint.tell(ranks);
            }
            checkpoint()
        };
        self.view
            .tick(progress, |r| draw_over(painter, flow, r, ranks), write)?;
        self.tell_done();
        Ok(())
    }

    /// Rank 0's end of the run: [`LiveView::finish`], its last frame drawn over the ranks.
    fn finish(&mut self, flow: &Flow<T>, progress: Progress) -> Result<(), FloodError> {
        let (painter, ranks) = (&mut self.painter, self.ranks.as_deref());
        self.view
            .finish(progress, |r| draw_over(painter, flow, r, ranks))?;
        self.tell_done();
        Ok(())
    }

    /// Tells the other ranks that what rank 0 did for the pages is over.
    fn tell_done(&self) {
        if let Some(ranks) = &self.ranks {
            Word::Done.tell(ranks);
        }
    }
}

/// Rank 0's frame: its own layers, over several ranks after telling the others to draw
/// theirs, summed over the ranks.
fn draw_over<T: Real>(
    painter: &mut Painter<T>,
    flow: &Flow<T>,
    request: &FrameRequest,
    ranks: Option<&Ranks>,
) -> Result<Frame, FloodError> {
    if let Some(ranks) = ranks {
        Word::Frame(*request).tell(ranks);
    }
    let mut layers = painter.layers(flow, request)?;
    if let Some(ranks) = ranks {
        sum_over(ranks, &mut layers);
    }
    painter.compose(layers, request)
}

/// A rank other than 0 does what rank 0 tells it until the tick is over.
fn follow<T: Real>(
    painter: &mut Painter<T>,
    flow: &Flow<T>,
    ranks: &Ranks,
    mut checkpoint: impl FnMut() -> Result<String, FloodError>,
) -> Result<(), FloodError> {
    loop {
        match Word::hear(ranks)? {
            Word::Frame(request) => {
                let mut layers = painter.layers(flow, &request)?;
                sum_over(ranks, &mut layers);
            }
            Word::Checkpoint => {
                checkpoint()?;
            }
            Word::Done => return Ok(()),
        }
    }
}

/// Every rank's `layers` replaced by their sum over the ranks (every rank draws the same
/// request on the same grid, so the layers have the same size everywhere).
fn sum_over(ranks: &Ranks, layers: &mut Layers) {
    let speed = layers.speed.as_deref().unwrap_or_default();
    let mut wide: Vec<f64> = layers
        .depth
        .iter()
        .chain(speed)
        .map(|&v| v.into())
        .collect();
    ranks.all_reduce(&mut wide, Op::Sum);
    let (depth, speed) = wide.split_at(layers.depth.len());
    let narrow = |values: &[f64]| values.iter().map(|&v| v as f32).collect::<Vec<f32>>();
    layers.depth = narrow(depth);
    if let Some(s) = &mut layers.speed {
        *s = narrow(speed);
    }
}

#[cfg(test)]
mod tests {
    use super::Word;
    use live_view::FrameRequest;

    #[test]
    fn words_go_over_the_wire_and_back_unchanged() {
        let frame = FrameRequest {
            field: 1,
            view: [1280, 720],
            full: true,
        };
        let partial = FrameRequest {
            field: 0,
            view: [16, 4096],
            full: false,
        };
        for word in [
            Word::Frame(frame),
            Word::Frame(partial),
            Word::Checkpoint,
            Word::Done,
        ] {
            assert_eq!(Word::decode(word.encode()).expect("a word"), word);
        }
        assert!(Word::decode([9; super::WORD_BYTES]).is_err());
    }
}
