//! Whether bytes are a whole cubin: what the run time checks before it hands embedded SASS
//! to the driver (which reads as far as the image's own headers say), and the compiler
//! before it embeds a cached one.

/// `e_machine` of CUDA ELF images.
const EM_CUDA: u16 = 190;

/// Section type of sections that take no room in the file.
const SHT_NOBITS: u32 = 8;

/// Whether `image` is a 64-bit little-endian CUDA ELF image whose program and section
/// header tables, and every section with contents, lie inside it: the driver may then
/// read it without reading past its end. (It says nothing of whether the code is sound.)
pub fn is_cubin(image: &[u8]) -> bool {
    let u16_at = |at: usize| -> Option<u16> {
        Some(u16::from_le_bytes(image.get(at..at + 2)?.try_into().ok()?))
    };
    let u32_at = |at: usize| -> Option<u32> {
        Some(u32::from_le_bytes(image.get(at..at + 4)?.try_into().ok()?))
    };
    let u64_at = |at: usize| -> Option<usize> {
        let v = u64::from_le_bytes(image.get(at..at + 8)?.try_into().ok()?);
        usize::try_from(v).ok()
    };
    let inside = |offset: usize, count: usize, size: usize| {
        count
            .checked_mul(size)
            .and_then(|bytes| offset.checked_add(bytes))
            .is_some_and(|end| end <= image.len())
    };
    let check = || -> Option<bool> {
        let header = image.get(..64)?;
        if &header[..4] != b"\x7fELF" || header[4] != 2 || header[5] != 1 {
            return Some(false);
        }
        if u16_at(18)? != EM_CUDA {
            return Some(false);
        }
        let (phoff, shoff) = (u64_at(0x20)?, u64_at(0x28)?);
        let (phentsize, phnum) = (u16_at(0x36)? as usize, u16_at(0x38)? as usize);
        let (shentsize, shnum) = (u16_at(0x3a)? as usize, u16_at(0x3c)? as usize);
        if !inside(phoff, phnum, phentsize) || !inside(shoff, shnum, shentsize) {
            return Some(false);
        }
        if shnum > 0 && shentsize < 64 {
            return Some(false);
        }
        for s in 0..shnum {
            let at = shoff + s * shentsize;
            let (kind, offset, size) = (u32_at(at + 4)?, u64_at(at + 0x18)?, u64_at(at + 0x20)?);
            if kind != SHT_NOBITS && !inside(offset, 1, size) {
                return Some(false);
            }
        }
        Some(true)
    };
    check().unwrap_or(false)
}

#[cfg(test)]
mod tests {
    use super::is_cubin;

    /// A minimal CUDA ELF image: the header, one section header (a 4-byte section at 128)
    /// and its contents.
    fn image() -> Vec<u8> {
        let mut b = vec![0u8; 200];
        b[..4].copy_from_slice(b"\x7fELF");
        b[4] = 2;
        b[5] = 1;
        b[18..20].copy_from_slice(&190u16.to_le_bytes());
        b[0x28..0x30].copy_from_slice(&64u64.to_le_bytes()); // section headers at 64
        b[0x3a..0x3c].copy_from_slice(&64u16.to_le_bytes());
        b[0x3c..0x3e].copy_from_slice(&1u16.to_le_bytes());
        b[64 + 4..64 + 8].copy_from_slice(&1u32.to_le_bytes()); // PROGBITS
        b[64 + 0x18..64 + 0x20].copy_from_slice(&128u64.to_le_bytes());
        b[64 + 0x20..64 + 0x28].copy_from_slice(&4u64.to_le_bytes());
        b
    }

    #[test]
    fn a_whole_image_passes() {
        assert!(is_cubin(&image()));
    }

    #[test]
    fn short_foreign_or_overrunning_images_fail() {
        assert!(!is_cubin(b"not a cubin"));
        assert!(!is_cubin(b"\x7fELF"));
        let b = image();
        assert!(!is_cubin(&b[..100]), "the section's contents cut off");
        assert!(
            !is_cubin(&b[..120]),
            "ends inside the section headers' table"
        );
        let mut other = b.clone();
        other[18] = 62; // x86-64
        assert!(!is_cubin(&other));
        let mut far = b.clone();
        far[64 + 0x20..64 + 0x28].copy_from_slice(&u64::MAX.to_le_bytes());
        assert!(!is_cubin(&far), "a size that overflows");
        let mut nobits = far;
        nobits[64 + 4..64 + 8].copy_from_slice(&8u32.to_le_bytes());
        assert!(is_cubin(&nobits), "a NOBITS section takes no room");
    }
}
