//! The flood's extent on a sparse run: per cell the largest depth so far and the time the
//! depth first exceeded the arrival depth, on the present blocks. A block freed after
//! water had been in it hands its values to the host (`retired`), and gets them back if it
//! is added again, so the extent covers every cell the water ever reached.

use crate::kernels::kp07;
use crate::{FloodError, Grid};
use std::collections::HashMap;
use stencil_runtime::blocks::{BlockGrid, BlockKey, Relayout};
use stencil_runtime::{Backend, BlockField, BlockList, Real, Value};

/// What a cell's arrival time holds until water arrives.
const NOT_YET: f64 = -1.0;

/// The largest depth and the arrival time of every cell (see the module's text).
pub(super) struct Extent<T: Real> {
    deepest: BlockField<T>,
    arrival: BlockField<T>,
    /// The depth above which water has arrived (m).
    arrival_depth: f64,
    /// Freed blocks that had held water: their slots of `deepest` and `arrival`.
    retired: HashMap<BlockKey, [Vec<T>; 2]>,
}

impl<T: Real> Extent<T> {
    /// No water anywhere yet, on `blocks`' present layout.
    pub fn new(blocks: &BlockGrid, arrival_depth: f64) -> Result<Extent<T>, FloodError> {
        Ok(Extent {
            deepest: BlockField::new(blocks, T::zero())?,
            arrival: BlockField::new(blocks, T::from_f64(NOT_YET))?,
            arrival_depth,
            retired: HashMap::new(),
        })
    }

    /// Records the present state (surface `w` over the bed's corners `bed`) at `time`.
    pub fn track(
        &mut self,
        backend: &Backend,
        list: &BlockList,
        w: &BlockField<T>,
        bed: &BlockField<T>,
        time: &Value<T>,
    ) -> Result<(), FloodError> {
        kp07::track::launch_blocks(
            backend,
            list,
            w,
            bed,
            &mut self.deepest,
            &mut self.arrival,
            time,
            T::from_f64(self.arrival_depth),
        )?;
        Ok(())
    }

    /// Before `remove` leave `blocks` (listed in `list`): keeps on the host the values of
    /// those that held water (one flag per block read back, one copy per such block).
    pub fn retire(
        &mut self,
        blocks: &BlockGrid,
        list: &BlockList,
        remove: &[BlockKey],
    ) -> Result<(), FloodError> {
        if remove.is_empty() {
            return Ok(());
        }
        let flags = self.deepest.flags(list, 0)?;
        let removed: std::collections::HashSet<&BlockKey> = remove.iter().collect();
        let wet: Vec<BlockKey> = list
            .keys()
            .iter()
            .zip(&flags)
            .filter(|(k, f)| f.any() && removed.contains(k))
            .map(|(k, _)| *k)
            .collect();
        for key in wet {
            let slot = |f: &BlockField<T>| -> Result<Vec<T>, FloodError> {
                Ok(f.slot_values(blocks, key)?.unwrap_or_default())
            };
            let values = [slot(&self.deepest)?, slot(&self.arrival)?];
            self.retired.insert(key, values);
        }
        Ok(())
    }

    /// The largest depth and the arrival time, the fields a block carries to another rank.
    pub fn fields(&self) -> [&BlockField<T>; 2] {
        [&self.deepest, &self.arrival]
    }

    /// [`Extent::fields`], to write.
    pub fn fields_mut(&mut self) -> [&mut BlockField<T>; 2] {
        [&mut self.deepest, &mut self.arrival]
    }

    /// Follows a change of the blocks: added blocks get back their retired values, or
    /// none yet.
    pub fn follow(&mut self, blocks: &BlockGrid, change: &Relayout) -> Result<(), FloodError> {
        let g = *blocks.geometry();
        let retired = &self.retired;
        let value = |k: usize, default: f64| {
            move |p: [isize; 3]| {
                let inside = (0..g.dims).all(|a| (0..g.domain[a] as isize).contains(&p[a]));
                if !inside {
                    return T::from_f64(default);
                }
                let at = p.map(|x| x as usize);
                let key = g.key_of(at);
                match retired.get(&key) {
                    Some(values) => {
                        let o = g.origin(key);
                        values[k][g.element([0, 1, 2].map(|a| (at[a] - o[a]) as isize))]
                    }
                    None => T::from_f64(default),
                }
            }
        };
        self.deepest.follow(blocks, change, value(0, 0.0))?;
        self.arrival.follow(blocks, change, value(1, NOT_YET))?;
        self.retired.retain(|k, _| !blocks.contains(*k));
        Ok(())
    }

    /// The largest depth and the arrival time (negative: never) per cell, row by row from
    /// the south.
    pub fn values(&self, blocks: &BlockGrid) -> Result<[Vec<f64>; 2], FloodError> {
        let g = *blocks.geometry();
        let mut out = [0.0, NOT_YET].map(|d| vec![d; g.domain[0] * g.domain[1]]);
        for (k, field) in [&self.deepest, &self.arrival].into_iter().enumerate() {
            let dense = field.to_dense(blocks, 0, T::nan())?.interior()?;
            for (o, v) in out[k].iter_mut().zip(dense) {
                if !v.is_nan() {
                    *o = v.as_f64();
                }
            }
        }
        for (key, values) in &self.retired {
            let o = g.origin(*key);
            for j in o[1]..(o[1] + g.block[1]).min(g.domain[1]) {
                for i in o[0]..(o[0] + g.block[0]).min(g.domain[0]) {
                    let e = g.element([(i - o[0]) as isize, (j - o[1]) as isize, 0]);
                    for k in 0..2 {
                        out[k][j * g.domain[0] + i] = values[k][e].as_f64();
                    }
                }
            }
        }
        Ok(out)
    }

    /// Puts back values taken by [`Extent::values`] (one per cell of `grid`).
    pub fn set(
        &mut self,
        blocks: &BlockGrid,
        grid: &Grid,
        deepest: &[f64],
        arrival: &[f64],
    ) -> Result<(), FloodError> {
        grid.check_cells("restored largest depth", deepest.len())?;
        grid.check_cells("restored arrival time", arrival.len())?;
        let g = *blocks.geometry();
        let at = |values: &[f64], default: f64, p: [isize; 3]| {
            let inside = (0..2).all(|a| (0..g.domain[a] as isize).contains(&p[a]));
            T::from_f64(if inside {
                values[p[1] as usize * g.domain[0] + p[0] as usize]
            } else {
                default
            })
        };
        self.deepest = BlockField::from_fn(blocks, |p| at(deepest, 0.0, p))?;
        self.arrival = BlockField::from_fn(blocks, |p| at(arrival, NOT_YET, p))?;
        self.retired.clear();
        for key in g.all_keys().filter(|k| !blocks.contains(*k)) {
            let o = g.origin(key);
            let wet = (o[1]..(o[1] + g.block[1]).min(g.domain[1])).any(|j| {
                (o[0]..(o[0] + g.block[0]).min(g.domain[0]))
                    .any(|i| deepest[j * g.domain[0] + i] != 0.0)
            });
            if wet {
                let mut slot = [
                    vec![T::zero(); g.slot_len()],
                    vec![T::from_f64(NOT_YET); g.slot_len()],
                ];
                for j in o[1]..(o[1] + g.block[1]).min(g.domain[1]) {
                    for i in o[0]..(o[0] + g.block[0]).min(g.domain[0]) {
                        let e = g.element([(i - o[0]) as isize, (j - o[1]) as isize, 0]);
                        slot[0][e] = T::from_f64(deepest[j * g.domain[0] + i]);
                        slot[1][e] = T::from_f64(arrival[j * g.domain[0] + i]);
                    }
                }
                self.retired.insert(key, slot);
            }
        }
        Ok(())
    }

    /// The depth above which water has arrived (m).
    pub fn arrival_depth(&self) -> f64 {
        self.arrival_depth
    }

    /// Bytes allocated for the two fields' arenas.
    pub fn memory(&self) -> usize {
        self.deepest.bytes() + self.arrival.bytes()
    }
}
