//! The two questions [`TextCounter`](super::TextCounter) asks of every byte, many bytes at a
//! time: how many newlines, and which bytes of an ASCII block belong to words. In a component
//! (`wasm32` with `simd128`, as discern builds its built-ins) sixteen bytes go through each
//! instruction; elsewhere a plain loop gives the same answers (the unit tests hold the two
//! definitions together; `tests/e2e/agreement.rs` holds the component to `wc`).

/// The bytes [`word_bytes`] judges at once.
pub(super) const BLOCK: usize = 64;

/// Whether an ASCII byte separates words (`is_word_separator` on ASCII).
pub(super) fn separates(b: u8) -> bool {
    matches!(b, b' ' | b'\t' | b'\n' | 0x0b | 0x0c | b'\r')
}

/// The newlines in `bytes`.
#[cfg(not(all(target_arch = "wasm32", target_feature = "simd128")))]
pub(super) fn newlines(bytes: &[u8]) -> u64 {
    bytes.iter().filter(|&&b| b == b'\n').count() as u64
}

/// Bit `k` set when byte `k` of the [`BLOCK`] bytes is a word byte; `None` when a byte is not
/// ASCII (the caller then decodes characters) or there are fewer than [`BLOCK`] bytes.
#[cfg(not(all(target_arch = "wasm32", target_feature = "simd128")))]
pub(super) fn word_bytes(block: &[u8]) -> Option<u64> {
    let block: &[u8; BLOCK] = block.try_into().ok()?;
    let mut words = 0;
    for (k, &b) in block.iter().enumerate() {
        if !b.is_ascii() {
            return None;
        }
        words |= u64::from(!separates(b)) << k;
    }
    Some(words)
}

#[cfg(all(target_arch = "wasm32", target_feature = "simd128"))]
pub(super) use simd::{newlines, word_bytes};

#[cfg(all(target_arch = "wasm32", target_feature = "simd128"))]
mod simd {
    use core::arch::wasm32::{
        i8x16_bitmask, i8x16_eq, u8x16, u8x16_le, u8x16_splat, u8x16_sub,
        u16x8_extadd_pairwise_u8x16, u32x4_extadd_pairwise_u16x8, u32x4_extract_lane, v128,
        v128_or,
    };

    use super::BLOCK;

    /// Sixteen bytes, built lane by lane: the compiler makes one `v128.load` of it, with no
    /// `unsafe` here.
    fn load(b: &[u8; 16]) -> v128 {
        u8x16(
            b[0], b[1], b[2], b[3], b[4], b[5], b[6], b[7], b[8], b[9], b[10], b[11], b[12], b[13],
            b[14], b[15],
        )
    }

    pub(in super::super) fn newlines(bytes: &[u8]) -> u64 {
        let (sixteens, rest) = bytes.as_chunks::<16>();
        let mut total = 0;
        // Each lane counts at most 255 newlines before it is summed.
        for run in sixteens.chunks(255) {
            let mut lanes = u8x16_splat(0);
            for sixteen in run {
                // A newline's lane is all ones (-1): subtracting it adds one.
                lanes = u8x16_sub(lanes, i8x16_eq(load(sixteen), u8x16_splat(b'\n')));
            }
            let sums = u32x4_extadd_pairwise_u16x8(u16x8_extadd_pairwise_u8x16(lanes));
            total += u64::from(
                u32x4_extract_lane::<0>(sums)
                    + u32x4_extract_lane::<1>(sums)
                    + u32x4_extract_lane::<2>(sums)
                    + u32x4_extract_lane::<3>(sums),
            );
        }
        total + rest.iter().filter(|&&b| b == b'\n').count() as u64
    }

    pub(in super::super) fn word_bytes(block: &[u8]) -> Option<u64> {
        let block: &[u8; BLOCK] = block.try_into().ok()?;
        let (mut high, mut words) = (0u16, 0u64);
        for (k, sixteen) in block.as_chunks::<16>().0.iter().enumerate() {
            let v = load(sixteen);
            high |= i8x16_bitmask(v);
            let space = i8x16_eq(v, u8x16_splat(b' '));
            // `\t` to `\r` are consecutive: below them, the subtraction wraps past them.
            let control = u8x16_le(u8x16_sub(v, u8x16_splat(b'\t')), u8x16_splat(b'\r' - b'\t'));
            words |= u64::from(!i8x16_bitmask(v128_or(space, control))) << (16 * k);
        }
        (high == 0).then_some(words)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_block_judges_each_byte_as_the_separator_set_does() {
        for b in 0u8..0x80 {
            let mut block = [b'a'; BLOCK];
            block[7] = b;
            block[BLOCK - 1] = b;
            let words = word_bytes(&block).expect("ASCII");
            let word = !crate::is_word_separator(char::from(b));
            assert_eq!(words >> 7 & 1 == 1, word, "byte {b:#x}");
            assert_eq!(words >> 63 == 1, word, "byte {b:#x} last");
            assert_eq!(words.count_ones(), 62 + 2 * u32::from(word));
        }
        let mut block = [b' '; BLOCK];
        block[40] = 0xc3;
        assert_eq!(word_bytes(&block), None, "a byte that is not ASCII");
        assert_eq!(word_bytes(&block[..BLOCK - 1]), None, "too few bytes");
    }

    #[test]
    fn newlines_are_counted_wherever_they_fall() {
        let mut bytes = vec![b'x'; 16 * 300 + 7];
        for at in (0..bytes.len()).step_by(3) {
            bytes[at] = b'\n';
        }
        for end in [0, 1, 15, 16, 17, 16 * 255, 16 * 256 + 3, bytes.len()] {
            let expected = bytes[..end].iter().filter(|&&b| b == b'\n').count() as u64;
            assert_eq!(newlines(&bytes[..end]), expected, "{end} bytes");
        }
    }
}
