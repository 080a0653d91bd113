//! Fixed pseudo-random tables for position keys, computed at compile time
//! with SplitMix64 so keys are the same on every machine and build.

pub use crate::splitmix::mix64;

/// A table of `N` distinct-looking 64-bit values drawn from `stream`.
pub const fn table<const N: usize>(stream: u64) -> [u64; N] {
    let mut values = [0u64; N];
    let mut i = 0;
    while i < N {
        values[i] =
            mix64(stream.wrapping_mul(0x1000_0000_01b3) ^ (i as u64).wrapping_mul(0x9e37_79b9));
        i += 1;
    }
    values
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tables_have_no_repeated_values() {
        let values: [u64; 4096] = table(7);
        let mut sorted = values.to_vec();
        sorted.sort_unstable();
        sorted.dedup();
        assert_eq!(sorted.len(), values.len());
    }
}
