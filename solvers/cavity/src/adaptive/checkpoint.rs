//! Checkpoints of an adaptive run: the settings, the tree's blocks and the values of `w`
//! and `psi` on them, written after a check and resumed bit for bit.

use super::flow::{AdaptiveCavity, AdaptiveConfig};
use crate::checkpoint::{read_checkpoint, write_atomically};
use crate::CavityError;
use serde::{Deserialize, Serialize};
use std::path::Path;
use stencil_runtime::BlockKey;

/// The first field of every adaptive checkpoint, and its version.
const FORMAT: &str = "stencil adaptive cavity checkpoint 1";

/// The state of an adaptive run after a check (see [`AdaptiveCavity::check`]).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct AdaptiveCheckpoint {
    format: String,
    /// Reynolds number.
    pub re: f64,
    /// Level 0's points per axis, the block size, the levels and the full levels.
    pub shape: (usize, usize, u8, u8),
    /// Threshold, coarsening fraction, steps between adaptations.
    pub adaptation: (f64, f64, u64),
    /// Time step fraction and Poisson cycles per stage.
    pub stepping: (f64, usize),
    /// Steps taken.
    pub step: u64,
    /// Simulated time.
    pub time: f64,
    /// The time step.
    pub dt: f64,
    /// The present blocks: level and index along x and y.
    pub blocks: Vec<(u8, [u32; 2])>,
    /// Vorticity: every block's slot (points and halo), blocks in order.
    pub w: Vec<f64>,
    /// Stream function, likewise.
    pub psi: Vec<f64>,
}

impl AdaptiveCheckpoint {
    /// The state of `flow` (right after a check).
    pub fn of(flow: &AdaptiveCavity) -> Result<AdaptiveCheckpoint, CavityError> {
        let c = flow.config();
        let grid = flow.tree().grid();
        let keys = grid.keys();
        let (mut w, mut psi) = (Vec::new(), Vec::new());
        for &k in &keys {
            w.extend(flow.w.slot_values(grid, k)?.unwrap_or_default());
            psi.extend(flow.psi.slot_values(grid, k)?.unwrap_or_default());
        }
        Ok(AdaptiveCheckpoint {
            format: FORMAT.into(),
            re: c.re,
            shape: (c.n0, c.block, c.levels, c.full),
            adaptation: (c.eps, c.coarsening, c.adapt_every),
            stepping: (c.cfl, c.poisson_cycles),
            step: flow.step,
            time: flow.time,
            dt: flow.dt,
            blocks: keys
                .iter()
                .map(|k| (k.level, [k.index[0], k.index[1]]))
                .collect(),
            w,
            psi,
        })
    }

    /// Writes to `path` atomically (a temporary file renamed over it).
    pub fn write(&self, path: &Path) -> Result<(), CavityError> {
        write_atomically(self, path)
    }

    /// Reads a checkpoint written by [`AdaptiveCheckpoint::write`].
    pub fn read(path: &Path) -> Result<AdaptiveCheckpoint, CavityError> {
        read_checkpoint(path, "an adaptive cavity checkpoint", FORMAT)
    }

    /// The settings the run had (the stopping rules are the caller's).
    pub fn config(&self) -> AdaptiveConfig {
        let (n0, block, levels, full) = self.shape;
        let (eps, coarsening, adapt_every) = self.adaptation;
        let (cfl, poisson_cycles) = self.stepping;
        AdaptiveConfig {
            re: self.re,
            n0,
            block,
            levels,
            full,
            eps,
            coarsening,
            adapt_every,
            cfl,
            poisson_cycles,
        }
    }

    /// An error unless `config` is the checkpoint's.
    pub fn matches(&self, config: &AdaptiveConfig) -> Result<(), CavityError> {
        if self.config() != *config {
            return Err(CavityError::Checkpoint(format!(
                "the checkpoint is of another run ({:?}); resume with its settings or start afresh",
                self.config()
            )));
        }
        Ok(())
    }

    /// Puts the checkpoint's blocks, fields, step and time into `flow` (made with the
    /// checkpoint's settings).
    pub fn restore(&self, flow: &mut AdaptiveCavity) -> Result<(), CavityError> {
        self.matches(flow.config())?;
        let keys: Vec<BlockKey> = self
            .blocks
            .iter()
            .map(|&(level, [i, j])| BlockKey::at(level, [i, j, 0]))
            .collect();
        let len = flow.tree().grid().geometry().slot_len();
        if self.w.len() != keys.len() * len || self.psi.len() != keys.len() * len {
            return Err(CavityError::Checkpoint(format!(
                "the checkpoint's fields hold {} and {} values where {} blocks of {len} need {}",
                self.w.len(),
                self.psi.len(),
                keys.len(),
                keys.len() * len
            )));
        }
        flow.restore(&keys, &self.w, &self.psi, (self.step, self.time, self.dt))
    }
}
