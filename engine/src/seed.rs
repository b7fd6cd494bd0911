//! SplitMix64, the one seed mixer of the workspace: the generator bots, benches and tests draw
//! from, and the finaliser that mixes numbers into seeds.
//!
//! SplitMix64 (Steele, Lea and Flood, "Fast splittable pseudorandom number generators", 2014;
//! Vigna's `splitmix64.c`) adds [`GAMMA`] to a 64-bit state and passes the sum through
//! [`mix64`]. It is tiny, fast and fully determined by its seed, so a bot built on it replays
//! exactly. It is not a cryptographic generator: where a seed must not give away the seed it came
//! from, derive it one-way (SHA-256) instead.

/// The SplitMix64 increment: 2^64 divided by the golden ratio, rounded to an odd number.
pub const GAMMA: u64 = 0x9E37_79B9_7F4A_7C15;

/// The SplitMix64 finaliser: a bijection on `u64` in which every input bit affects every output
/// bit. Invertible, so it hides nothing.
#[inline]
pub const fn mix64(z: u64) -> u64 {
    let z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    let z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// The SplitMix64 generator: a seeded stream of 64-bit numbers.
///
/// ```
/// use maumau_engine::seed::SplitMix64;
///
/// let mut a = SplitMix64::new(7);
/// let mut b = SplitMix64::new(7);
/// assert_eq!(a.next_u64(), b.next_u64());
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SplitMix64(u64);

impl SplitMix64 {
    /// A generator from a seed.
    #[inline]
    pub const fn new(seed: u64) -> SplitMix64 {
        SplitMix64(seed)
    }

    /// The next 64 random bits.
    #[inline]
    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(GAMMA);
        mix64(self.0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The first outputs for seed 1234567, from the reference `splitmix64.c`.
    #[test]
    fn matches_the_reference_sequence() {
        let mut g = SplitMix64::new(1_234_567);
        let got: Vec<u64> = (0..3).map(|_| g.next_u64()).collect();
        assert_eq!(
            got,
            [
                6_457_827_717_110_365_317,
                3_203_168_211_198_807_973,
                9_817_491_932_198_370_423
            ]
        );
    }
}
