//! What a cavity run is asked to do, and the checks that turn a bad request into an error
//! before any work.

use crate::CavityError;
use multigrid::Precision;

/// When a run stops.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Until {
    /// At steady state: when the relative change of the vorticity per unit time,
    /// `||w(t) - w(t - T)|| / (T ||w(t)||)` over the last check interval `T`, falls below
    /// [`Config::tolerance`].
    Steady,
    /// At this simulated time (the last step is shortened to land on it).
    Time(f64),
}

/// A cavity run: the physics, the grid, the numerics and when to stop.
#[derive(Clone, Debug, PartialEq)]
pub struct Config {
    /// Reynolds number `U L / nu` (lid speed and cavity side are 1).
    pub re: f64,
    /// Nodes per side, `2^k + 1` (walls included).
    pub n: usize,
    /// The Poisson solver's precision: [`Precision::F64`], or [`Precision::Mixed`] (the
    /// multigrid preconditioner in f32, residual and update in f64).
    pub precision: Precision,
    /// Steady-state tolerance on the relative change of `w` per unit time.
    pub tolerance: f64,
    /// When to stop.
    pub until: Until,
    /// The time step as a fraction of the RK4 stability estimate (see
    /// [`crate::stable_time_step`]); above 1 the run is expected to go unstable.
    pub cfl: f64,
    /// Multigrid cycles per RK4 stage (warm-started from the previous stage).
    pub poisson_cycles: usize,
    /// Steps between checks (steady-state test, stability test, time-step update,
    /// progress, checkpoints).
    pub check_every: usize,
    /// Give up after this many steps.
    pub max_steps: u64,
    /// On a CUDA device, record a whole time step into a CUDA graph and replay it.
    pub graph: bool,
    /// Which of the Poisson cycle's launches run fused ([`multigrid::Schedule`]); `None`
    /// takes the backend's; the iterates are the same either way.
    pub poisson_schedule: Option<multigrid::Schedule>,
}

impl Default for Config {
    /// Re = 100 on 129 x 129 nodes, to steady state at 1e-5, f64.
    fn default() -> Self {
        Config {
            re: 100.0,
            n: 129,
            precision: Precision::F64,
            tolerance: 1e-5,
            until: Until::Steady,
            cfl: 0.8,
            poisson_cycles: 1,
            check_every: 50,
            max_steps: 10_000_000,
            graph: true,
            poisson_schedule: None,
        }
    }
}

/// `Ok` when `holds`, else the [`CavityError::Config`] of option `name`, whose `value` is
/// not what it must be (`expected`): one rule of the checks of settings.
pub(crate) fn require(
    holds: bool,
    name: &'static str,
    value: impl ToString,
    expected: &'static str,
) -> Result<(), CavityError> {
    if holds {
        return Ok(());
    }
    Err(CavityError::Config {
        name,
        value: value.to_string(),
        expected,
    })
}

impl Config {
    /// Checks every option; the first bad one is a [`CavityError::Config`] naming it, its
    /// value and what it must be.
    pub fn validate(&self) -> Result<(), CavityError> {
        require(
            self.re > 0.0 && self.re.is_finite(),
            "re",
            self.re,
            "a positive finite Reynolds number",
        )?;
        require(
            self.n >= 9 && (self.n - 1).is_power_of_two(),
            "n",
            self.n,
            "2^k + 1 nodes per side with k >= 3 (multigrid coarsens by 2): 65, 129, 257, 513, ...",
        )?;
        require(
            self.tolerance > 0.0 && self.tolerance < 1.0,
            "tolerance",
            self.tolerance,
            "a relative change per unit time between 0 and 1 (e.g. 1e-5)",
        )?;
        if let Until::Time(t) = self.until {
            require(
                t > 0.0 && t.is_finite(),
                "t_end",
                t,
                "a positive finite time",
            )?;
        }
        require(
            self.cfl > 0.0 && self.cfl <= 4.0,
            "cfl",
            self.cfl,
            "a fraction of the stable time step in (0, 4] (1 is the estimated limit)",
        )?;
        require(
            (1..=20).contains(&self.poisson_cycles),
            "poisson_cycles",
            self.poisson_cycles,
            "1 to 20 multigrid cycles per stage",
        )?;
        require(
            self.check_every > 0,
            "check_every",
            self.check_every,
            "at least 1 step",
        )?;
        require(
            self.max_steps > 0,
            "max_steps",
            self.max_steps,
            "at least 1 step",
        )
    }

    /// Grid spacing.
    pub fn h(&self) -> f64 {
        1.0 / (self.n - 1) as f64
    }
}
