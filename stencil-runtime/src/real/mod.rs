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

/// Default methods of [`Real`] that are `num_traits::Float`'s: `fn name(self, args..) =
/// method;` takes `Self` arguments and returns `Float::method(self, args..)`.
macro_rules! float_methods {
    ($($(#[$doc:meta])* fn $name:ident(self $(, $arg:ident)*) = $float:ident;)*) => {
        $(
            $(#[$doc])*
            #[inline]
            fn $name(self $(, $arg: Self)*) -> Self {
                Float::$float(self $(, $arg)*)
            }
        )*
    };
}

/// Default methods of [`Real`] evaluated in f64 and rounded, as the device does:
/// `fn name(self, args..);` takes `Self` arguments and returns `f64::name`'s value.
macro_rules! f64_methods {
    ($($(#[$doc:meta])* fn $name:ident(self $(, $arg:ident)*);)*) => {
        $(
            $(#[$doc])*
            #[inline]
            fn $name(self $(, $arg: Self)*) -> Self {
                Self::from_f64(self.as_f64().$name($($arg.as_f64()),*))
            }
        )*
    };
}

/// `f32` or `f64`: the `T` of `#[stencil] fn k<T: Real>(..)`.
///
/// The methods are the operations generated CPU code uses; their semantics match the GPU
/// path (e.g. [`Real::powf`] of a negative base is NaN on every backend). Every method is
/// `#[inline]`: a kernel's rows call them in their inner loops, and a method compiled
/// apart from them (another code-generation unit, without cross-unit optimisation) is a
/// call per point that also stops the loop's vectorisation.
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
    float_methods! {
        /// `|x|`.
        fn abs(self) = abs;
        /// Square root.
        fn sqrt(self) = sqrt;
        /// Largest integer not above `x`.
        fn floor(self) = floor;
        /// Smallest integer not below `x`.
        fn ceil(self) = ceil;
        /// `x` without its fraction (toward zero).
        fn trunc(self) = trunc;
        /// The nearest integer, halves away from zero.
        fn round(self) = round;
        /// `e^x`.
        fn exp(self) = exp;
        /// Natural logarithm.
        fn ln(self) = ln;
        /// `2^x`.
        fn exp2(self) = exp2;
        /// Base-2 logarithm.
        fn log2(self) = log2;
        /// Base-10 logarithm.
        fn log10(self) = log10;
        /// Hyperbolic sine.
        fn sinh(self) = sinh;
        /// Hyperbolic cosine.
        fn cosh(self) = cosh;
        /// Hyperbolic tangent.
        fn tanh(self) = tanh;
        /// Cube root.
        fn cbrt(self) = cbrt;
        /// Inverse hyperbolic sine.
        fn asinh(self) = asinh;
        /// Inverse hyperbolic cosine.
        fn acosh(self) = acosh;
        /// Inverse hyperbolic tangent.
        fn atanh(self) = atanh;
    }
    f64_methods! {
        /// Sine. Evaluated in f64 and rounded, as the device does.
        fn sin(self);
        /// Cosine. Evaluated in f64 and rounded, as the device does.
        fn cos(self);
        /// Tangent. Evaluated in f64 and rounded, as the device does.
        fn tan(self);
        /// Arc sine (NaN beyond [-1, 1]). Evaluated in f64 and rounded, as the device does.
        fn asin(self);
        /// Arc cosine (NaN beyond [-1, 1]). Evaluated in f64 and rounded, as the device does.
        fn acos(self);
        /// Arc tangent. Evaluated in f64 and rounded, as the device does.
        fn atan(self);
        /// The angle of the point `(x, self)` from the x axis, in [-pi, pi]. Evaluated in f64
        /// and rounded, as the device does.
        fn atan2(self, x);
    }
    /// `self^y` for `self >= 0`; NaN for a negative base, except 1 at exponent 0 (as the
    /// device gives).
    #[inline]
    fn powf(self, y: Self) -> Self {
        if self < Self::zero() && y != Self::zero() {
            Self::nan()
        } else {
            Float::powf(self, y)
        }
    }
    float_methods! {
        /// Minimum; the other operand if one is NaN.
        fn min(self, o) = min;
        /// Maximum; the other operand if one is NaN.
        fn max(self, o) = max;
        /// `sqrt(self^2 + o^2)` without overflow or underflow in between.
        fn hypot(self, o) = hypot;
        /// Magnitude of `self` with the sign of `o`.
        fn copysign(self, o) = copysign;
        /// `self * a + b` with one rounding.
        fn fma(self, a, b) = mul_add;
    }
}

/// The conversions of [`Real`] for the primitive float type `$t`: `as` casts (rounding
/// to nearest, and saturating toward zero to `i64`), and the lossless `From` to `f64`.
macro_rules! conversions {
    ($t:ty) => {
        #[inline(always)]
        fn from_f64(x: f64) -> Self {
            x as $t
        }
        #[inline(always)]
        fn as_f64(self) -> f64 {
            f64::from(self)
        }
        #[inline(always)]
        fn from_i64(x: i64) -> Self {
            x as $t
        }
        #[inline(always)]
        fn as_i64(self) -> i64 {
            self as i64
        }
    };
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
    conversions!(f32);
}

impl Real for f64 {
    const PRECISION: Precision = Precision::F64;
    conversions!(f64);
}
