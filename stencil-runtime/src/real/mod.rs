//! The real types kernels are generic over.

mod device_pow;

use num_traits::Float;

/// Which floating-point type a value or field has.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Precision {
    /// `f32`.
    F32,
    /// `f64`.
    F64,
}

/// A type a field can hold: the reals (`f32`, `f64`), and `i32`, `u8` and `bool` (one
/// byte, 0 or 1), whose fields kernels read as `i64` and `bool` values.
pub trait Element: Copy + Default + PartialEq + Send + Sync + std::fmt::Debug + 'static {}

impl Element for f32 {}
impl Element for f64 {}
impl Element for i32 {}
impl Element for u8 {}
impl Element for bool {}

/// `f32` or `f64`: the `T` of `#[stencil] fn k<T: Real>(..)`.
///
/// The methods are the operations generated CPU code uses; their semantics match the GPU
/// path (e.g. [`Real::powf`] of a negative base is NaN on every backend).
pub trait Real:
    Element + Float + Default + Send + Sync + std::fmt::Debug + std::fmt::Display + 'static
{
    /// The precision of `Self`.
    const PRECISION: Precision;
    /// Converts from `f64`, rounding to nearest.
    fn from_f64(x: f64) -> Self;
    /// Converts to `f64` (exact).
    fn as_f64(self) -> f64;
    /// Converts from `i64`, rounding to nearest.
    fn from_i64(x: i64) -> Self;
    /// Converts to `i64`, truncating toward zero and saturating (NaN gives 0).
    fn as_i64(self) -> i64;
    /// `|x|`.
    fn abs(self) -> Self {
        Float::abs(self)
    }
    /// Square root.
    fn sqrt(self) -> Self {
        Float::sqrt(self)
    }
    /// Largest integer not above `x`.
    fn floor(self) -> Self {
        Float::floor(self)
    }
    /// Smallest integer not below `x`.
    fn ceil(self) -> Self {
        Float::ceil(self)
    }
    /// `x` without its fraction (toward zero).
    fn trunc(self) -> Self {
        Float::trunc(self)
    }
    /// The nearest integer, halves away from zero.
    fn round(self) -> Self {
        Float::round(self)
    }
    /// `e^x`.
    fn exp(self) -> Self {
        Float::exp(self)
    }
    /// Natural logarithm.
    fn ln(self) -> Self {
        Float::ln(self)
    }
    /// `2^x`.
    fn exp2(self) -> Self {
        Float::exp2(self)
    }
    /// Base-2 logarithm.
    fn log2(self) -> Self {
        Float::log2(self)
    }
    /// Base-10 logarithm.
    fn log10(self) -> Self {
        Float::log10(self)
    }
    /// Hyperbolic sine.
    fn sinh(self) -> Self {
        Float::sinh(self)
    }
    /// Hyperbolic cosine.
    fn cosh(self) -> Self {
        Float::cosh(self)
    }
    /// Hyperbolic tangent.
    fn tanh(self) -> Self {
        Float::tanh(self)
    }
    /// Cube root.
    fn cbrt(self) -> Self {
        Float::cbrt(self)
    }
    /// Inverse hyperbolic sine.
    fn asinh(self) -> Self {
        Float::asinh(self)
    }
    /// Inverse hyperbolic cosine.
    fn acosh(self) -> Self {
        Float::acosh(self)
    }
    /// Inverse hyperbolic tangent.
    fn atanh(self) -> Self {
        Float::atanh(self)
    }
    /// Sine. Evaluated in f64 and rounded, as the device does.
    fn sin(self) -> Self {
        Self::from_f64(self.as_f64().sin())
    }
    /// Cosine. Evaluated in f64 and rounded, as the device does.
    fn cos(self) -> Self {
        Self::from_f64(self.as_f64().cos())
    }
    /// Tangent. Evaluated in f64 and rounded, as the device does.
    fn tan(self) -> Self {
        Self::from_f64(self.as_f64().tan())
    }
    /// Arc sine (NaN beyond [-1, 1]). Evaluated in f64 and rounded, as the device does.
    fn asin(self) -> Self {
        Self::from_f64(self.as_f64().asin())
    }
    /// Arc cosine (NaN beyond [-1, 1]). Evaluated in f64 and rounded, as the device does.
    fn acos(self) -> Self {
        Self::from_f64(self.as_f64().acos())
    }
    /// Arc tangent. Evaluated in f64 and rounded, as the device does.
    fn atan(self) -> Self {
        Self::from_f64(self.as_f64().atan())
    }
    /// The angle of the point `(x, self)` from the x axis, in [-pi, pi]. Evaluated in f64
    /// and rounded, as the device does.
    fn atan2(self, x: Self) -> Self {
        Self::from_f64(self.as_f64().atan2(x.as_f64()))
    }
    /// Minimum; the other operand if one is NaN.
    fn min(self, o: Self) -> Self {
        Float::min(self, o)
    }
    /// Maximum; the other operand if one is NaN.
    fn max(self, o: Self) -> Self {
        Float::max(self, o)
    }
    /// `sqrt(self^2 + o^2)` without overflow or underflow in between.
    fn hypot(self, o: Self) -> Self {
        Float::hypot(self, o)
    }
    /// Magnitude of `self` with the sign of `o`.
    fn copysign(self, o: Self) -> Self {
        Float::copysign(self, o)
    }
    /// `self^y` for `self >= 0`; NaN for a negative base, except 1 at exponent 0 (as the
    /// device gives).
    fn powf(self, y: Self) -> Self {
        if self < Self::zero() && y != Self::zero() {
            Self::nan()
        } else {
            Float::powf(self, y)
        }
    }
    /// `self * a + b` with one rounding.
    fn fma(self, a: Self, b: Self) -> Self {
        Float::mul_add(self, a, b)
    }
}

impl Real for f32 {
    const PRECISION: Precision = Precision::F32;
    /// `self^y` as the device computes it ([`device_pow`]): inline arithmetic, which
    /// vectorises where the C library's `powf` is a call per point, and the device's
    /// values bit for bit; NaN for a negative base (1 at exponent 0).
    #[inline(always)]
    fn powf(self, y: f32) -> f32 {
        device_pow::pow_for_f32(f64::from(self), f64::from(y)) as f32
    }
    #[inline(always)]
    fn from_f64(x: f64) -> Self {
        x as f32
    }
    #[inline(always)]
    fn as_f64(self) -> f64 {
        self as f64
    }
    #[inline(always)]
    fn from_i64(x: i64) -> Self {
        x as f32
    }
    #[inline(always)]
    fn as_i64(self) -> i64 {
        self as i64
    }
}

impl Real for f64 {
    const PRECISION: Precision = Precision::F64;
    #[inline(always)]
    fn from_f64(x: f64) -> Self {
        x
    }
    #[inline(always)]
    fn as_f64(self) -> f64 {
        self
    }
    #[inline(always)]
    fn from_i64(x: i64) -> Self {
        x as f64
    }
    #[inline(always)]
    fn as_i64(self) -> i64 {
        self as i64
    }
}
