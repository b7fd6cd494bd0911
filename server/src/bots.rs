//! The built-in bot that fills unclaimed seats and plays for seats that gave up.

use maumau_engine::Action;

/// Picks a uniformly random legal action, from a seeded SplitMix64 so a match replays exactly.
#[derive(Clone, Debug)]
pub(crate) struct RandomBot(u64);

impl RandomBot {
    pub(crate) fn new(seed: u64) -> RandomBot {
        RandomBot(seed)
    }

    pub(crate) fn choose(&mut self, legal: &[Action]) -> Action {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        legal[((z ^ (z >> 31)) % legal.len() as u64) as usize]
    }
}
