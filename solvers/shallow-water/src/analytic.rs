//! Exact solutions the scheme is checked against: the dam breaks of Ritter (dry bed) and
//! Stoker (wet bed), and Thacker's planar surface oscillating in a paraboloid (as set up
//! in SWASHES, Delestre et al. 2013, section 4.2.2).

/// Depth and velocity at a point.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Exact {
    /// Depth (m).
    pub h: f64,
    /// x velocity (m/s).
    pub u: f64,
    /// y velocity (m/s).
    pub v: f64,
}

/// The dam break over a dry (`h_right = 0`, Ritter 1892) or wet (`h_right > 0`, Stoker
/// 1957) flat frictionless bed: depth `h_left` left of `x0` and `h_right` right of it,
/// both at rest at `t = 0`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct DamBreak {
    /// Gravity.
    pub g: f64,
    /// The dam's position.
    pub x0: f64,
    /// Depth upstream.
    pub h_left: f64,
    /// Depth downstream (0: dry).
    pub h_right: f64,
}

impl DamBreak {
    /// The depth `h_m` and velocity `u_m` between the rarefaction and the shock: where
    /// the rarefaction's `u = 2 (c_l - c_m)` meets the shock's
    /// `u = (h_m - h_r) sqrt(g (h_m + h_r) / (2 h_m h_r))` (found by bisection).
    fn middle_state(&self) -> (f64, f64) {
        let (g, hl, hr) = (self.g, self.h_left, self.h_right);
        let rarefaction = |h: f64| 2.0 * ((g * hl).sqrt() - (g * h).sqrt());
        let shock = |h: f64| (h - hr) * (g * (h + hr) / (2.0 * h * hr)).sqrt();
        let (mut lo, mut hi) = (hr, hl);
        for _ in 0..200 {
            let mid = 0.5 * (lo + hi);
            if rarefaction(mid) > shock(mid) {
                lo = mid;
            } else {
                hi = mid;
            }
        }
        let h = 0.5 * (lo + hi);
        (h, rarefaction(h))
    }

    /// The solution at `x` and time `t > 0`.
    pub fn at(&self, x: f64, t: f64) -> Exact {
        let (g, hl, hr) = (self.g, self.h_left, self.h_right);
        let xi = (x - self.x0) / t;
        let cl = (g * hl).sqrt();
        let still = |h| Exact { h, u: 0.0, v: 0.0 };
        if xi <= -cl {
            return still(hl);
        }
        let fan = Exact {
            h: (2.0 * cl - xi).powi(2) / (9.0 * g),
            u: 2.0 / 3.0 * (xi + cl),
            v: 0.0,
        };
        if hr <= 0.0 {
            return if xi < 2.0 * cl { fan } else { still(0.0) };
        }
        let (hm, um) = self.middle_state();
        let shock_speed = hm * um / (hm - hr);
        if xi < um - (g * hm).sqrt() {
            fan
        } else if xi < shock_speed {
            Exact {
                h: hm,
                u: um,
                v: 0.0,
            }
        } else {
            still(hr)
        }
    }
}

/// Thacker's planar surface in a paraboloid: the bed
/// `z = -h0 (1 - r^2 / a^2)` around the centre `(L/2, L/2)` of the square `[0, L]^2`, and
/// a planar surface rotating in it with period `2 pi / omega`, `omega = sqrt(2 g h0) / a`:
/// `h = eta h0 / a^2 (2 X cos(omega t) + 2 Y sin(omega t) - eta) - z` where positive,
/// `(u, v) = eta omega (-sin(omega t), cos(omega t))` in the water.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Thacker {
    /// Gravity.
    pub g: f64,
    /// The paraboloid's depth at its centre.
    pub h0: f64,
    /// Its radius at the level `z = 0`.
    pub a: f64,
    /// The oscillation's amplitude parameter.
    pub eta: f64,
    /// The side of the square domain.
    pub l: f64,
}

impl Thacker {
    /// The SWASHES parameters: `h0 = 0.1`, `a = 1`, `eta = 0.5`, `L = 4`.
    pub fn swashes() -> Thacker {
        Thacker {
            g: 9.81,
            h0: 0.1,
            a: 1.0,
            eta: 0.5,
            l: 4.0,
        }
    }

    /// The angular frequency.
    pub fn omega(&self) -> f64 {
        (2.0 * self.g * self.h0).sqrt() / self.a
    }

    /// The period.
    pub fn period(&self) -> f64 {
        2.0 * std::f64::consts::PI / self.omega()
    }

    /// The bed.
    pub fn bed(&self, x: f64, y: f64) -> f64 {
        let (dx, dy) = (x - 0.5 * self.l, y - 0.5 * self.l);
        -self.h0 * (1.0 - (dx * dx + dy * dy) / (self.a * self.a))
    }

    /// The solution at `(x, y)` and time `t`.
    pub fn at(&self, x: f64, y: f64, t: f64) -> Exact {
        let (dx, dy) = (x - 0.5 * self.l, y - 0.5 * self.l);
        let wt = self.omega() * t;
        let surface = self.eta * self.h0 / (self.a * self.a)
            * (2.0 * dx * wt.cos() + 2.0 * dy * wt.sin() - self.eta);
        let h = surface - self.bed(x, y);
        if h > 0.0 {
            Exact {
                h,
                u: -self.eta * self.omega() * wt.sin(),
                v: self.eta * self.omega() * wt.cos(),
            }
        } else {
            Exact {
                h: 0.0,
                u: 0.0,
                v: 0.0,
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stokers_middle_state_satisfies_both_jump_conditions() {
        let d = DamBreak {
            g: 9.81,
            x0: 0.0,
            h_left: 1.0,
            h_right: 0.1,
        };
        let (h, u) = d.middle_state();
        assert!(h > 0.1 && h < 1.0);
        // Mass across the shock: s (h_m - h_r) = h_m u_m; momentum: s (h_m u_m) = h_m u_m^2 + g/2 (h_m^2 - h_r^2).
        let s = h * u / (h - 0.1);
        let momentum = s * h * u - (h * u * u + 0.5 * 9.81 * (h * h - 0.01));
        assert!(momentum.abs() < 1e-9, "{momentum}");
    }

    #[test]
    fn thackers_water_volume_stays_constant() {
        let t = Thacker::swashes();
        let volume = |time: f64| {
            let n = 400;
            let d = t.l / n as f64;
            (0..n * n)
                .map(|k| {
                    let (x, y) = (((k % n) as f64 + 0.5) * d, ((k / n) as f64 + 0.5) * d);
                    t.at(x, y, time).h * d * d
                })
                .sum::<f64>()
        };
        let (v0, v1) = (volume(0.0), volume(0.3 * t.period()));
        assert!((v0 - v1).abs() < 1e-4 * v0, "{v0} {v1}");
    }
}
