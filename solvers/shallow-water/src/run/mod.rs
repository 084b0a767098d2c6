//! A whole run of a scenario: time stepping with the flood's extent tracked on the
//! backend, gauges sampled, pictures, VTK files and checkpoints written at the output
//! times, a progress bar, and at the end the maximum-depth and arrival-time grids, the
//! gauge CSV files, the GIF and a summary with the mass error.

use crate::checkpoint::{Checkpoint, Header};
use crate::live::{self, Live};
use crate::output::gauges::Sample;
use crate::output::{self, picture, Snapshot, Writer};
use crate::{FloodError, Flow, Raster, SavedState, Scenario, Storage};
use indicatif::{ProgressBar, ProgressStyle};
use live_view::Progress;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};
use stencil_ranks::Ranks;
use stencil_runtime::{Backend, Precision, Real};
use wall::Part;

mod wall;
pub use wall::WallSplit;

/// The ranks this process runs among (one, or those mpirun started in a program built
/// with the `mpi` feature: see [`Ranks::from_env`]), shared for [`Run::start`]. With MPI,
/// `Ranks` stays on the thread that made it (it is not `Send`): the `Arc` only shares it
/// between that thread's runs.
pub fn shared_ranks() -> Result<Arc<Ranks>, stencil_ranks::RanksError> {
    #[allow(clippy::arc_with_non_send_sync)]
    let shared = Arc::new(Ranks::from_env()?);
    Ok(shared)
}

/// The value written for "never" in the arrival-time grid.
const NODATA: f64 = -9999.0;

/// Steps a call of [`Flow::advance`] takes at most between two looks at the progress bar
/// and the live view.
const STEPS_PER_CALL: u64 = 64;

/// How a run behaves, apart from the scenario.
#[derive(Clone, Debug)]
pub struct RunOptions {
    /// The directory everything is written to (created if missing).
    pub out: PathBuf,
    /// Whether to draw a progress bar.
    pub progress: bool,
    /// Dense or sparse storage ([`Storage::Auto`]: sparse where it pays).
    pub storage: Storage,
    /// Where to serve a live view of the run (`None`: no server).
    pub serve: Option<std::net::SocketAddr>,
}

/// What a finished run reports.
#[derive(Clone, Debug, PartialEq)]
pub struct Summary {
    /// Steps taken in all (across resumptions).
    pub steps: u64,
    /// Simulated time reached (s).
    pub time: f64,
    /// Wall time of this invocation.
    pub wall: Duration,
    /// Simulated time covered by this invocation (s).
    pub simulated: f64,
    /// The water volume at the start (m^3).
    pub initial_volume: f64,
    /// The water volume at the end (m^3).
    pub final_volume: f64,
    /// Whether every side is closed (then the volume change is the mass error).
    pub closed: bool,
    /// The largest depth reached anywhere (m).
    pub max_depth: f64,
    /// Where this invocation's wall time went.
    pub split: WallSplit,
}

impl Summary {
    /// `|V - V0| / V0`: with closed sides, the mass-conservation error.
    pub fn relative_volume_change(&self) -> f64 {
        (self.final_volume - self.initial_volume).abs() / self.initial_volume.max(f64::MIN_POSITIVE)
    }
}

impl std::fmt::Display for Summary {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let wall = self.wall.as_secs_f64();
        writeln!(
            f,
            "steps {} to t = {:.3} s; this run: {:.3} s simulated in {wall:.2} s wall ({:.1}x real time)",
            self.steps,
            self.time,
            self.simulated,
            self.simulated / wall.max(1e-9)
        )?;
        let what = if self.closed {
            "mass-conservation error (closed sides)"
        } else {
            "volume change (water crossed open or imposed sides)"
        };
        writeln!(
            f,
            "volume {:.6e} m^3 -> {:.6e} m^3: {what} {:.3e}",
            self.initial_volume,
            self.final_volume,
            self.relative_volume_change()
        )?;
        writeln!(f, "largest depth reached {:.3} m", self.max_depth)?;
        write!(f, "{}", self.split)
    }
}

/// Simulated times closer to an output or end time than this fraction of the end time
/// count as reached (the last step lands on them up to rounding).
const OUTPUT_SLACK: f64 = 1e-12;

/// A run in precision `T`.
pub struct Run<T: Real> {
    scenario: Scenario,
    options: RunOptions,
    flow: Flow<T>,
    /// Each gauge's samples so far.
    samples: Vec<Vec<Sample>>,
    /// The next output time's index in the scenario's list.
    next_output: usize,
    /// The outputs written so far, over every run resumed from this one's checkpoints:
    /// the files are numbered by it (`depth_0001.png`, ...), so a run resumed with other
    /// output times goes on numbering without overwriting.
    written: usize,
    /// The next gauge sampling time.
    next_gauge: f64,
    /// The pictures written so far.
    frames: Vec<PathBuf>,
    /// Each cell's mean bed and the hillshade of the terrain (shared with the thread
    /// that writes the pictures).
    bed: Arc<[f64]>,
    /// Each gauge cell's bed as the kernels compute it.
    gauge_beds: Vec<f64>,
    shade: Arc<[f64]>,
    /// The depth of the darkest blue.
    depth_scale: f64,
    /// The ranks of a run split over several (rank 0 writes every file).
    ranks: Option<Arc<Ranks>>,
}

impl<T: Real> Run<T> {
    /// Sets up `scenario` on `backend`, writing into `options.out`.
    pub fn new(
        backend: &Backend,
        scenario: Scenario,
        options: RunOptions,
    ) -> Result<Run<T>, FloodError> {
        Run::start(backend, scenario, options, None)
    }

    /// [`Run::new`], split over `ranks` when given (several ranks: every rank runs its
    /// part, sparse over every block; rank 0 writes the files, the same files one rank
    /// writes, and serves the live view, whose frames every rank draws its part of).
    pub fn start(
        backend: &Backend,
        scenario: Scenario,
        options: RunOptions,
        ranks: Option<Arc<Ranks>>,
    ) -> Result<Run<T>, FloodError> {
        let ranks = ranks.filter(|r| r.size() > 1);
        output::create_dir(&options.out)?;
        let arrival_depth = scenario.output.arrival_depth;
        let mut flow = match &ranks {
            Some(r) => {
                let storage = options.storage;
                Flow::<T>::over_ranks(backend, &scenario.setup, r.clone(), storage, arrival_depth)?
            }
            None => Flow::<T>::new(backend, &scenario.setup, options.storage, arrival_depth)?,
        };
        flow.track()?;
        let grid = *flow.grid();
        let bed = scenario.setup.terrain.cells();
        let shade = picture::hillshade(&grid, &bed);
        let depth_scale = if scenario.output.depth_scale > 0.0 {
            scenario.output.depth_scale
        } else {
            flow.survey()?.max_depth.max(1e-3)
        };
        let gauge_beds = scenario
            .gauges
            .iter()
            .map(|g| flow.cell_bed(g.i, g.j))
            .collect::<Result<Vec<_>, _>>()?;
        let mut run = Run {
            gauge_beds,
            samples: vec![vec![]; scenario.gauges.len()],
            next_output: 0,
            written: 0,
            next_gauge: 0.0,
            frames: vec![],
            scenario,
            options,
            flow,
            bed: bed.into(),
            shade: shade.into(),
            depth_scale,
            ranks,
        };
        if !run.scenario.gauges.is_empty() {
            run.sample_gauges()?;
            run.next_gauge = run.scenario.output.gauge_every;
        }
        Ok(run)
    }

    /// Sets up `scenario` and puts back the state saved in `checkpoint` (which must come
    /// from the same scenario, grid and precision).
    pub fn resume(
        backend: &Backend,
        scenario: Scenario,
        options: RunOptions,
        checkpoint: &Path,
    ) -> Result<Run<T>, FloodError> {
        Run::resume_over(backend, scenario, options, checkpoint, None)
    }

    /// [`Run::resume`], split over `ranks` when given (as [`Run::start`]).
    pub fn resume_over(
        backend: &Backend,
        scenario: Scenario,
        options: RunOptions,
        checkpoint: &Path,
        ranks: Option<Arc<Ranks>>,
    ) -> Result<Run<T>, FloodError> {
        let saved = Checkpoint::read(checkpoint)?;
        let mut run = Run::<T>::start(backend, scenario, options, ranks)?;
        saved.matches::<T>(checkpoint, &run.scenario)?;
        run.flow.restore(&saved.saved)?;
        run.flow.set_flood_extent(&saved.deepest, &saved.arrival)?;
        run.samples = saved.samples;
        // The next output is the first of this scenario's times after the checkpoint's
        // (the list may differ from the saved run's: another end time, other frames).
        let slack = run.scenario.end_time * OUTPUT_SLACK;
        let now = run.flow.time();
        if now > run.scenario.end_time + slack {
            return Err(FloodError::Input {
                file: checkpoint.display().to_string(),
                line: 0,
                message: format!(
                    "it is at t = {now} s, past this run's end time {} s; give a later --end-time, or start afresh without --resume",
                    run.scenario.end_time
                ),
            });
        }
        run.next_output = run
            .scenario
            .output
            .times
            .partition_point(|&t| t <= now + slack);
        run.written = saved.next_output;
        run.next_gauge = saved.next_gauge;
        run.frames = saved.frames;
        run.depth_scale = saved.depth_scale;
        Ok(run)
    }

    /// The simulation.
    pub fn flow(&self) -> &Flow<T> {
        &self.flow
    }

    /// Runs to the scenario's end time, writing every output; returns the summary (also
    /// written to `summary.txt`).
    pub fn run(mut self) -> Result<Summary, FloodError> {
        let start = Instant::now();
        let t_start = self.flow.time();
        let end = self.scenario.end_time;
        let mut live = Live::start(
            self.options.serve,
            &self.flow,
            self.ranks.as_ref(),
            || live::description(&self.scenario, self.flow.grid(), self.depth_scale),
            &self.shade[..],
        )?;
        let bar = self.progress_bar();
        let mut last_draw = Instant::now();
        let slack = end * OUTPUT_SLACK;
        let mut split = WallSplit::default();
        // Pictures, VTK files and checkpoints are written while the run steps on.
        let mut writer = Writer::start()?;
        while self.flow.time() < end - slack {
            let output_time = self.scenario.output.times.get(self.next_output).copied();
            let target = [Some(end), output_time, self.gauge_time()]
                .into_iter()
                .flatten()
                .fold(f64::INFINITY, f64::min);
            // Up to the next time something is due, a few steps at a time so that the
            // progress and the live view follow (the flow checks the state every hundred
            // steps).
            split.time(Part::Stepping, || {
                self.flow.advance(target, slack, STEPS_PER_CALL)
            })?;
            let now = self.flow.time();
            if self.gauge_time().is_some_and(|t| now >= t - slack) {
                split.time(Part::Gauges, || self.sample_gauges())?;
                self.next_gauge += self.scenario.output.gauge_every;
            }
            if output_time.is_some_and(|t| now >= t - slack) {
                split.time(Part::Snapshots, || self.write_outputs(&mut writer))?;
                self.next_output += 1;
                self.written += 1;
                split.time(Part::Checkpoints, || self.save_checkpoint(&mut writer))?;
            }
            let write = || -> Result<String, FloodError> {
                self.save_checkpoint(&mut writer)?;
                writer.wait()?;
                Ok(format!(
                    "checkpoint written at t = {:.2} s: {}",
                    self.flow.time(),
                    self.options.out.join("checkpoint.bin").display()
                ))
            };
            live.tick(&self.flow, self.progress(), write)?;
            if last_draw.elapsed() > Duration::from_millis(200) {
                self.draw(&bar, start, t_start);
                last_draw = Instant::now();
            }
        }
        self.draw(&bar, start, t_start);
        bar.finish();
        live.finish(&self.flow, self.progress())?;
        let survey = split.time(Part::Stepping, || self.flow.check())?;
        split.time(Part::Finish, || {
            writer.finish()?;
            self.finish()
        })?;
        let [deepest, _] = self.flow.flood_extent()?;
        let summary = Summary {
            steps: self.flow.steps(),
            time: self.flow.time(),
            wall: start.elapsed(),
            simulated: self.flow.time() - t_start,
            initial_volume: self.flow.initial_volume(),
            final_volume: survey.volume,
            closed: self.scenario.setup.boundaries.closed(),
            max_depth: deepest.iter().copied().fold(0.0, f64::max),
            split,
        };
        if self.writes() {
            let path = self.options.out.join("summary.txt");
            let text = format!("scenario {}\n{summary}\n", self.scenario.name);
            std::fs::write(&path, text).map_err(|e| output::write_error(&path, e))?;
        }
        Ok(summary)
    }

    /// Where the run is, for the live view.
    fn progress(&self) -> Progress {
        Progress {
            time: self.flow.time(),
            step: self.flow.steps(),
            fraction: self.flow.time() / self.scenario.end_time.max(f64::MIN_POSITIVE),
        }
    }

    /// The next gauge sampling time, if there are gauges.
    fn gauge_time(&self) -> Option<f64> {
        (!self.scenario.gauges.is_empty()).then_some(self.next_gauge)
    }

    fn sample_gauges(&mut self) -> Result<(), FloodError> {
        let cells: Vec<(usize, usize, f64)> = (self.scenario.gauges.iter().zip(&self.gauge_beds))
            .map(|(g, &bed)| (g.i, g.j, bed))
            .collect();
        let probed = self.flow.probe_many(&cells)?;
        let time = self.flow.time();
        for ((&(_, _, bed), (depth, u, v)), samples) in
            cells.iter().zip(probed).zip(&mut self.samples)
        {
            samples.push(Sample {
                time,
                depth,
                surface: depth + bed,
                u,
                v,
            });
        }
        Ok(())
    }

    /// The picture and the VTK file of the present state, as the output settings ask:
    /// the state read here, the files made and written by `writer`.
    fn write_outputs(&mut self, writer: &mut Writer) -> Result<(), FloodError> {
        let out = &self.scenario.output;
        if !(out.png || out.vtk) {
            return Ok(());
        }
        let (depth, u, v) = self.flow.depth_and_velocity()?;
        if !self.writes() {
            return Ok(());
        }
        let stem = format!("{:04}", self.written + 1);
        let png = out.png.then(|| self.options.out.join("pictures"));
        let vtk = out.vtk.then(|| self.options.out.join("vtk"));
        let png = png.map(|dir| (dir.join(format!("depth_{stem}.png")), dir));
        let vtk = vtk.map(|dir| (dir.join(format!("state_{stem}.vtk")), dir));
        if let Some((path, _)) = &png {
            self.frames.push(path.clone());
        }
        let (grid, bed, shade) = (*self.flow.grid(), self.bed.clone(), self.shade.clone());
        let (time, scale) = (self.flow.time(), self.depth_scale);
        let dry = self.flow.physics().dry_depth;
        let single = T::PRECISION == Precision::F32;
        writer.submit(move || {
            let snapshot = Snapshot {
                grid: &grid,
                bed: &bed,
                depth,
                u,
                v,
                time,
            };
            if let Some((path, dir)) = png {
                output::create_dir(&dir)?;
                let image = picture::render(&snapshot, &shade, scale, dry);
                picture::write_png(&image, &path)?;
            }
            if let Some((path, dir)) = vtk {
                output::create_dir(&dir)?;
                output::vtk::write(&snapshot, &path, single)?;
            }
            Ok(())
        })
    }

    /// What is written once at the end: grids, gauge series, the GIF.
    fn finish(&self) -> Result<(), FloodError> {
        let out = &self.scenario.output;
        let dir = &self.options.out;
        let grid = *self.flow.grid();
        // Gathered on every rank; written by one.
        let extent = if out.asc {
            Some(self.flow.flood_extent()?)
        } else {
            None
        };
        if !self.writes() {
            return Ok(());
        }
        if let Some([deepest, arrival]) = extent {
            let deepest = Raster {
                grid,
                values: deepest,
            };
            deepest.write(&dir.join("max_depth.asc"), NODATA)?;
            let never = |x: f64| if x < 0.0 { f64::NAN } else { x };
            let arrival = Raster {
                grid,
                values: arrival.into_iter().map(never).collect(),
            };
            arrival.write(&dir.join("arrival_time.asc"), NODATA)?;
        }
        if !self.scenario.gauges.is_empty() {
            let gauges = dir.join("gauges");
            output::create_dir(&gauges)?;
            for (g, samples) in self.scenario.gauges.iter().zip(&self.samples) {
                output::gauges::write(&gauges, g, samples)?;
            }
        }
        if out.gif && !self.frames.is_empty() {
            picture::write_gif(&self.frames, &dir.join("flood.gif"), 250)?;
        }
        Ok(())
    }

    /// Reads what a checkpoint holds and queues it to `writer`.
    fn save_checkpoint(&self, writer: &mut Writer) -> Result<(), FloodError> {
        let [deepest, arrival] = self.flow.flood_extent()?;
        let checkpoint = Checkpoint {
            header: Header::of::<T>(&self.scenario),
            saved: SavedState {
                time: self.flow.time(),
                steps: self.flow.steps(),
                initial_volume: self.flow.initial_volume(),
                state: self.flow.state()?,
            },
            deepest,
            arrival,
            samples: self.samples.clone(),
            next_output: self.written,
            next_gauge: self.next_gauge,
            frames: self.frames.clone(),
            depth_scale: self.depth_scale,
        };
        if !self.writes() {
            return Ok(());
        }
        let path = self.options.out.join("checkpoint.bin");
        writer.submit(move || checkpoint.write(&path))
    }

    /// Whether this process writes the files (the only one, or rank 0 of several).
    fn writes(&self) -> bool {
        self.ranks.as_ref().is_none_or(|r| r.rank() == 0)
    }

    fn progress_bar(&self) -> ProgressBar {
        if !self.options.progress || !self.writes() {
            return ProgressBar::hidden();
        }
        let bar = ProgressBar::new(1000);
        let style = ProgressStyle::with_template("{bar:40.cyan/blue} {percent:>3}% {msg}")
            .unwrap_or_else(|_| ProgressStyle::default_bar());
        bar.set_style(style);
        bar
    }

    /// Shows the simulated time, the wall time and their ratio.
    fn draw(&self, bar: &ProgressBar, start: Instant, t_start: f64) {
        let t = self.flow.time();
        let wall = start.elapsed().as_secs_f64();
        bar.set_position((1000.0 * t / self.scenario.end_time) as u64);
        bar.set_message(format!(
            "t = {t:.1} / {:.0} s, step {}, wall {wall:.1} s, {:.1}x real time",
            self.scenario.end_time,
            self.flow.steps(),
            (t - t_start) / wall.max(1e-9)
        ));
    }
}
