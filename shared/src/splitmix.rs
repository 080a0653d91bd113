//! SplitMix64: a small, fast, fixed 64-bit generator and its output mixer,
//! for what needs variety, not secrecy (the solver's key tables, a guess's
//! shuffle). Deals never use it: they come from ChaCha.

/// The generator's step: the golden ratio in 64 bits.
const GOLDEN_GAMMA: u64 = 0x9e37_79b9_7f4a_7c15;

/// SplitMix64's output function applied to the state after `value`: a
/// strong 64-bit mixer.
pub const fn mix64(value: u64) -> u64 {
    let mut value = value.wrapping_add(GOLDEN_GAMMA);
    value = (value ^ (value >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    value = (value ^ (value >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    value ^ (value >> 31)
}

/// The generator: the same seed gives the same stream on every machine.
#[derive(Clone, Copy, Debug)]
pub struct SplitMix64 {
    state: u64,
}

impl SplitMix64 {
    /// A generator started at `seed`.
    pub const fn new(seed: u64) -> SplitMix64 {
        SplitMix64 { state: seed }
    }

    /// The next value of the stream.
    pub fn next_u64(&mut self) -> u64 {
        let value = mix64(self.state);
        self.state = self.state.wrapping_add(GOLDEN_GAMMA);
        value
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_stream_is_the_reference_splitmix64() {
        // The first outputs of the reference SplitMix64 seeded with 0.
        let mut generator = SplitMix64::new(0);
        let first: Vec<u64> = (0..3).map(|_| generator.next_u64()).collect();
        assert_eq!(
            first,
            [
                0xe220_a839_7b1d_cdaf,
                0x6e78_9e6a_a1b9_65f4,
                0x06c4_5d18_8009_454f
            ]
        );
    }
}
