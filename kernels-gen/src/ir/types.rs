//! The IR's value types and the precisions a generic kernel is instantiated at.

use std::fmt;

/// Value types.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Ty {
    /// The kernel's generic real type `T`.
    Real,
    /// `f32`.
    F32,
    /// `f64`.
    F64,
    /// A 64-bit signed integer (indices, loop variables, `i64` parameters).
    Int,
    /// A boolean (in a field's memory, one byte: 0 or 1).
    Bool,
    /// `i32`: only the element type of a field, whose values the kernel reads as `i64`
    /// (widened) and writes as `i64` (wrapped to 32 bits, as `as i32` does).
    I32,
    /// `u8`: only the element type of a field, read as `i64` and written wrapped to 8 bits.
    U8,
}

impl Ty {
    /// Whether the type is a floating-point type.
    pub fn is_float(self) -> bool {
        matches!(self, Ty::Real | Ty::F32 | Ty::F64)
    }

    /// The type of the values a kernel reads from and writes to a field of this element
    /// type: `i64` for the narrow integers, the type itself otherwise.
    pub fn value(self) -> Ty {
        match self {
            Ty::I32 | Ty::U8 => Ty::Int,
            t => t,
        }
    }

    /// The concrete type when `T` is instantiated at `p`.
    pub fn concrete(self, p: Precision) -> Ty {
        match self {
            Ty::Real => p.ty(),
            t => t,
        }
    }

    /// The type's name as a user writes it.
    pub fn name(self) -> &'static str {
        match self {
            Ty::Real => "T",
            Ty::F32 => "f32",
            Ty::F64 => "f64",
            Ty::Int => "i64",
            Ty::Bool => "bool",
            Ty::I32 => "i32",
            Ty::U8 => "u8",
        }
    }
}

impl fmt::Display for Ty {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// The precision a generic kernel is instantiated at.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Precision {
    /// `T = f32`.
    F32,
    /// `T = f64`.
    F64,
}

impl Precision {
    /// Both precisions, in the order artifacts are generated.
    pub const ALL: [Precision; 2] = [Precision::F32, Precision::F64];

    /// The concrete IR type.
    pub fn ty(self) -> Ty {
        match self {
            Precision::F32 => Ty::F32,
            Precision::F64 => Ty::F64,
        }
    }

    /// `"f32"` or `"f64"`.
    pub fn name(self) -> &'static str {
        self.ty().name()
    }
}
