//! Invariants of the rules engine over random games of every profile, seat count, `calls` mode and
//! a sample of options.
//!
//! Each game is driven by a seeded chooser ([`Chooser`]) that mostly sends a listed legal action of
//! the seat to act (sometimes with another call word, which makes omissions), lets other seats
//! challenge or late-cure when their legal actions list it, and now and then sends an arbitrary
//! action from an arbitrary seat. After every step [`check_state`] and the step logic check:
//!
//! - (a) card conservation: hands + stock + discard pile hold exactly the profile's deck;
//! - (b) `to_act()` is `Some` exactly while the phase is not [`Phase::Over`], and the seat to act
//!   always has a legal action (no dead end);
//! - (c) every listed action of every seat is accepted; an action is accepted exactly when it is
//!   listed, is a listed play sent with another call word, or is one of brazilian's penalised but
//!   accepted actions (a false ANNOUNCE by the seat to move outside phase `announced`, a false
//!   ACCUSE when no offence is open); a rejected action returns `Err`, reports no event and
//!   leaves the game `==` to what it was;
//! - (d) an observation does not depend on cards its seat cannot see: a game that differs only in
//!   the other seats' hands and the stock order gives the same observation, and [`event_for`]
//!   shows a seat no other seat's drawn card;
//! - (e) `Game::from_position(&g.position()) == Ok(g)`;
//! - (f) replaying the config, seed and accepted actions from scratch gives the same events and
//!   the same final state;
//! - (g) every game ends within the bound below.
//!
//! # Termination bound
//!
//! Let `T = max_turns_per_round` and `R = max_rounds`. A match plays at most `R` rounds: the
//! match ends at the latest when a round ends while `round >= R`. In one round:
//!
//! - every completed turn increments `turns`, and the round ends as BLOCKED at the end of the
//!   turn that makes `turns == T`; a round that ends inside a turn (a seat goes out, an
//!   impossible forced draw) has completed fewer than `T` turns. So a round starts at most `T`
//!   turns.
//! - In one turn the listed actions are at most 4: one 1-card `Draw` (after it the phase is
//!   `drawn`; a debt-paying draw ends the turn), one valid brazilian `Announce` (after it the phase
//!   is `announced`, which lists only plays), one `Play` or `Pass` (each ends the turn, or the
//!   round), and one `Challenge` or late-cure `Announce` by any seat: at most one offence is
//!   open at a time, it is opened only when a turn ends, and a challenge or cure closes it (after
//!   a successful challenge `just_accused` lists no second one). A play sent with another call
//!   word is still a play, so it is counted with the listed actions.
//! - Before the first turn, at most one `DeclareSuit`.
//!
//! So a round takes at most `4T + 1` listed actions and a match at most `R * (4T + 1)`. The
//! brazilian penalised actions (false ANNOUNCE, false ACCUSE) are not counted: they end no turn,
//! and a seat could repeat them forever; the chooser sends them only rarely. The tests assert both
//! the per-round and the per-match count, and use small `T` and `R` in some cases so that the caps
//! are what ends rounds and matches.
#![allow(
    clippy::expect_used,
    reason = "a test or bench fails loudly on a broken setup"
)]

use std::collections::HashSet;

use maumau_engine::seed::SplitMix64;
use maumau_engine::{
    ACTION_COUNT, Action, Call, CallsMode, Card, DeckSize, Event, Game, MatchConfig, Options,
    Phase, ProfileId, Rank, RoundEnd, Seat, Suit, event_for,
};
use proptest::prelude::*;
use proptest::test_runner::TestCaseError;

// ----- a small seeded generator ------------------------------------------------------------

/// The engine's SplitMix64 with the draws these tests need.
#[derive(Clone, Debug)]
struct SplitMix(SplitMix64);

impl SplitMix {
    fn next(&mut self) -> u64 {
        self.0.next_u64()
    }

    /// Uniform in `0..n` (`n > 0`).
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }

    /// True with probability `num / den`.
    fn chance(&mut self, num: u64, den: u64) -> bool {
        self.next() % den < num
    }

    fn pick<T: Copy>(&mut self, items: &[T]) -> T {
        items[self.below(items.len())]
    }

    fn shuffle<T>(&mut self, items: &mut [T]) {
        for i in (1..items.len()).rev() {
            let j = self.below(i + 1);
            items.swap(i, j);
        }
    }
}

// ----- test cases --------------------------------------------------------------------------

/// One random game: its configuration, the match seed and the chooser's seed.
#[derive(Clone, Copy, Debug)]
struct Case {
    config: MatchConfig,
    seed: u64,
    chooser: u64,
}

const ALL_CALLS: [CallsMode; 3] = [CallsMode::Challenge, CallsMode::Enforce, CallsMode::Off];

/// The options of `profile` selected by the bits of `bits` (other profiles' options stay off).
fn options_for(profile: ProfileId, bits: u8) -> Options {
    let mut o = Options::default();
    let bit = |i: u32| bits & (1 << i) != 0;
    match profile {
        ProfileId::Classic => o.single_round = bit(0),
        ProfileId::PenaltyPoints => {
            if bit(0) {
                o.deck = DeckSize::Short32;
            }
            o.nine_reverses = bit(1);
            o.ace_skips = bit(2);
            o.mau_penalty = !bit(3);
            if bit(4) {
                o.limit = 150;
            }
        }
        ProfileId::Brazilian => o.jack_wild_on_paid_seven = bit(0),
        ProfileId::Romanian32 => {}
    }
    o
}

/// The seats a profile with these options is played by, from the rules (checked against the
/// numbers of the brief in [`seat_ranges_are_the_documented_ones`]).
fn seat_range(profile: ProfileId, options: Options) -> (u8, u8) {
    let mut c = MatchConfig::new(profile, 4);
    c.options = options;
    let r = c.rules().expect("4 seats are valid in every profile");
    (r.min_seats, r.max_seats)
}

/// Builds a case from raw numbers (the proptest strategy shrinks these).
fn make_case(
    profile: usize,
    seat_pick: u8,
    calls: usize,
    option_bits: u8,
    caps: (u8, u16, u16),
    seed: u64,
    chooser: u64,
) -> Case {
    let profile = ProfileId::ALL[profile % 4];
    let options = options_for(profile, option_bits);
    let (lo, hi) = seat_range(profile, options);
    let seats = lo + seat_pick % (hi - lo + 1);
    let mut config = MatchConfig::new(profile, seats);
    config.options = options;
    config.calls = ALL_CALLS[calls % 3];
    let (kind, t, r) = caps;
    // Small turn limits always go with few rounds: romanian-32's BLOCKED rounds score nothing,
    // so a small turn limit alone would make very long matches.
    let (turns, rounds) = match kind % 4 {
        0 => (1000, 1000),
        1 => (1 + t % 40, 1 + r % 4),
        2 => (1000, 1 + r % 2),
        _ => (20 + t % 100, 1 + r % 6),
    };
    config.max_turns_per_round = turns;
    config.max_rounds = rounds;
    Case {
        config,
        seed,
        chooser,
    }
}

// ----- the chooser ---------------------------------------------------------------------------

/// Why an action was sent, for the statistics and error messages.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Why {
    /// A listed action of the seat to act.
    Listed,
    /// A listed play sent with another call word.
    CallVariant,
    /// A challenge or late cure by a seat that is not to act.
    Bystander,
    /// A brazilian penalised action (or its rejected counterpart in other profiles).
    Penalised,
    /// Any action from any seat.
    Arbitrary,
}

/// The seeded chooser that drives a game.
struct Chooser {
    rng: SplitMix,
    /// A hoarder takes every draw it may (brazilian and romanian-32 allow voluntary draws), which
    /// empties the stock: rebuilds, penalty draws that run out, impossible forced draws.
    hoarder: bool,
}

impl Chooser {
    fn choose(&mut self, g: &Game, mover: Seat) -> (Seat, Action, Why) {
        let n = g.seats();
        let rng = &mut self.rng;
        // Now and then an arbitrary action from an arbitrary seat (sometimes no seat at all).
        if rng.chance(1, 16) {
            let seat = if rng.chance(1, 20) {
                n + rng.below(3) as u8
            } else {
                rng.below(n as usize) as Seat
            };
            let action = Action::from_index(rng.below(ACTION_COUNT)).expect("index in range");
            return (seat, action, Why::Arbitrary);
        }
        // Rarely: an ANNOUNCE by the mover or an ACCUSE by anyone, whatever the state (brazilian
        // accepts and penalises the false ones, the others reject them).
        if rng.chance(1, 40) {
            return if rng.chance(1, 2) {
                (mover, Action::Announce(Call::MauMau), Why::Penalised)
            } else {
                (
                    rng.below(n as usize) as Seat,
                    Action::Challenge,
                    Why::Penalised,
                )
            };
        }
        // Other seats challenge or cure when they may.
        let mut offers: Vec<(Seat, Action)> = Vec::new();
        for s in (0..n).filter(|&s| s != mover) {
            for &a in g.legal_actions(s).iter() {
                if matches!(a, Action::Challenge | Action::Announce(_)) {
                    offers.push((s, a));
                }
            }
        }
        if !offers.is_empty() && rng.chance(1, 2) {
            let (s, a) = rng.pick(&offers);
            return (s, a, Why::Bystander);
        }
        let list = g.legal_actions(mover);
        let plays: Vec<Action> = list
            .iter()
            .copied()
            .filter(|a| matches!(a, Action::Play { .. }))
            .collect();
        let action = if self.hoarder && list.contains(&Action::Draw) && rng.chance(7, 8) {
            Action::Draw
        } else if !plays.is_empty() && rng.chance(4, 5) {
            rng.pick(&plays)
        } else if list.is_empty() {
            // A dead end; check_state reports it. Send something so the step is well defined.
            Action::Draw
        } else {
            rng.pick(list.as_slice())
        };
        // Another call word: often on the plays that need one (a hand of 2 or fewer cards),
        // which makes omissions, challenge windows and pending-out seats.
        let needs_call = g.hand(mover).len() <= 2;
        if let Action::Play { card, suit, call } = action
            && rng.chance(1, if needs_call { 2 } else { 8 })
        {
            let other = Call::ALL[rng.below(3)];
            if other != call {
                let variant = Action::Play {
                    card,
                    suit,
                    call: other,
                };
                return (mover, variant, Why::CallVariant);
            }
        }
        (mover, action, Why::Listed)
    }
}

// ----- expectations --------------------------------------------------------------------------

/// True when `action` is a play that `seat` has listed with another call word.
fn is_call_variant(g: &Game, seat: Seat, action: Action) -> bool {
    let Action::Play { card, suit, call } = action else {
        return false;
    };
    seat < g.seats()
        && g.legal_actions(seat).iter().any(|a| {
            matches!(*a, Action::Play { card: c, suit: s, call: k }
                if c == card && s == suit && k != call)
        })
}

/// True when `action` is one of brazilian's penalised but accepted actions (RULES.md §1.4, §2.3,
/// Appendix B): a false ANNOUNCE(MAU_MAU) by the seat to move outside phase `announced`, or a
/// false ACCUSE while no offence is open and no accusation has just succeeded, under `calls`
/// `challenge` (for ACCUSE) or not `off` (for ANNOUNCE).
fn is_penalised_ok(g: &Game, seat: Seat, action: Action) -> bool {
    if g.config().profile != ProfileId::Brazilian || seat >= g.seats() {
        return false;
    }
    let live = matches!(
        g.phase(),
        Phase::Start | Phase::AfterDraw | Phase::Announced
    );
    match action {
        Action::Announce(c) => {
            live && c == Call::MauMau
                && g.config().calls != CallsMode::Off
                && g.to_act() == Some(seat)
                && g.phase() != Phase::Announced
        }
        Action::Challenge => {
            live && g.config().calls == CallsMode::Challenge
                && g.offence().is_none()
                && !g.just_accused()
        }
        _ => false,
    }
}

/// Whether the engine must accept `action` from `seat` now: exactly the listed actions, the
/// listed plays with another call word, and brazilian's penalised actions.
fn expected_accepted(g: &Game, seat: Seat, action: Action) -> bool {
    (seat < g.seats() && g.legal_actions(seat).contains(&action))
        || is_call_variant(g, seat, action)
        || is_penalised_ok(g, seat, action)
}

// ----- the checks ----------------------------------------------------------------------------

macro_rules! ensure {
    ($cond:expr, $($fmt:tt)+) => {
        if !$cond {
            return Err(format!($($fmt)+));
        }
    };
}

/// The full deck of a configuration, as counts per card index (0..52), computed from RULES.md
/// §1.1 and the profiles (not from the engine's own deck mask).
fn expected_deck(config: &MatchConfig) -> [u16; 52] {
    let short = config.profile == ProfileId::Romanian32
        || (config.profile == ProfileId::PenaltyPoints && config.options.deck == DeckSize::Short32);
    let copies = if config.profile == ProfileId::Brazilian {
        2
    } else {
        1
    };
    let mut deck = [0u16; 52];
    for suit in Suit::ALL {
        for rank in Rank::ALL {
            if !short || rank >= Rank::Seven {
                deck[Card::new(rank, suit).index() as usize] = copies;
            }
        }
    }
    deck
}

/// (a) Every card of the deck is in exactly one place, as often as the deck holds it.
fn check_conservation(g: &Game) -> Result<(), String> {
    let want = expected_deck(g.config());
    let total: u16 = want.iter().sum();
    let expected_total = match g.config().profile {
        ProfileId::Brazilian => 104,
        ProfileId::Romanian32 => 32,
        ProfileId::PenaltyPoints if g.config().options.deck == DeckSize::Short32 => 32,
        _ => 52,
    };
    ensure!(
        total == expected_total,
        "deck of {total} cards, want {expected_total}"
    );
    let mut got = [0u16; 52];
    let mut count = |c: Card| got[c.index() as usize] += 1;
    for s in 0..g.seats() {
        g.hand(s).iter().for_each(&mut count);
    }
    g.stock().as_slice().iter().copied().for_each(&mut count);
    g.discard().as_slice().iter().copied().for_each(&mut count);
    ensure!(
        got == want,
        "card conservation broken: {}",
        (0..52u8)
            .filter(|&i| got[i as usize] != want[i as usize])
            .map(|i| format!(
                "{} x{} (deck x{})",
                Card::from_index(i),
                got[i as usize],
                want[i as usize]
            ))
            .collect::<Vec<_>>()
            .join(", ")
    );
    Ok(())
}

/// The value of `key=` in a position line.
fn field<'a>(position: &'a str, key: &str) -> Option<&'a str> {
    position
        .split_whitespace()
        .find_map(|w| w.strip_prefix(key)?.strip_prefix('='))
}

fn cards_text(cards: &[Card]) -> String {
    if cards.is_empty() {
        return "-".to_string();
    }
    cards
        .iter()
        .map(|c| c.to_string())
        .collect::<Vec<_>>()
        .join(",")
}

/// (d) A game that differs from `g` only in what `observer` cannot see: the cards of the other
/// seats' hands and of the stock are shuffled among those places, every hand and the stock
/// keeping its size. When another seat is to move, its `drawn` card and `penalty` cards (hidden
/// from `observer` too) are chosen anew from its new hand.
fn hidden_permutation(g: &Game, observer: Seat, rng: &mut SplitMix) -> Result<Game, String> {
    let text = g.position();
    let current: Seat = field(&text, "turn")
        .and_then(|t| t.parse().ok())
        .ok_or_else(|| format!("no turn= in {text}"))?;
    let n = g.seats();
    let mut pool: Vec<Card> = Vec::new();
    for s in (0..n).filter(|&s| s != observer) {
        pool.extend(g.hand(s).iter());
    }
    pool.extend(g.stock().as_slice().iter().copied());
    rng.shuffle(&mut pool);
    let mut next = pool.into_iter();
    let mut hands: Vec<Vec<Card>> = Vec::new();
    for s in 0..n {
        if s == observer {
            hands.push(g.hand(s).iter().collect());
        } else {
            hands.push(next.by_ref().take(g.hand(s).len()).collect());
        }
    }
    let stock: Vec<Card> = next.collect();
    ensure!(
        stock.len() == g.stock().len(),
        "permutation lost cards: {} in the stock, want {}",
        stock.len(),
        g.stock().len()
    );
    let (mut drawn, mut penalty) = (
        cards_text(&g.drawn_card().into_iter().collect::<Vec<_>>()),
        cards_text(&g.penalty_cards().iter().collect::<Vec<_>>()),
    );
    if current != observer {
        // The new hand is in random order: its first cards serve as drawn and penalty cards.
        let hand = &hands[current as usize];
        let d = usize::from(g.drawn_card().is_some());
        let p = g.penalty_cards().len();
        ensure!(
            d + p <= hand.len(),
            "drawn and penalty cards not in the hand of {current}"
        );
        drawn = cards_text(&hand[..d]);
        penalty = cards_text(&hand[d..d + p]);
    }
    let rewritten: Vec<String> = text
        .split_whitespace()
        .map(|w| match w.split_once('=').map(|(k, _)| k) {
            Some("hands") => format!(
                "hands={}",
                hands
                    .iter()
                    .map(|h| cards_text(h))
                    .collect::<Vec<_>>()
                    .join("/")
            ),
            Some("stock") => format!("stock={}", cards_text(&stock)),
            Some("drawn") => format!("drawn={drawn}"),
            Some("penalty") => format!("penalty={penalty}"),
            _ => w.to_string(),
        })
        .collect();
    let rewritten = rewritten.join(" ");
    Game::from_position(&rewritten).map_err(|e| {
        format!(
            "the permuted position does not parse: {e}\n  original: {text}\n  permuted: {rewritten}"
        )
    })
}

/// The checks made in every state: (a), (b), (c) for listed actions, (d) and (e).
fn check_state(g: &Game, rng: &mut SplitMix) -> Result<(), String> {
    let n = g.seats();
    // (a)
    check_conservation(g)?;
    // (b)
    let over = g.phase() == Phase::Over;
    ensure!(
        g.to_act().is_some() != over,
        "to_act() = {:?} in phase {:?}",
        g.to_act(),
        g.phase()
    );
    ensure!(
        g.match_result().is_some() == over,
        "match_result() is {:?} in phase {:?}",
        g.match_result(),
        g.phase()
    );
    ensure!(
        g.turns() <= g.config().max_turns_per_round,
        "turns {} above max_turns_per_round {}",
        g.turns(),
        g.config().max_turns_per_round
    );
    ensure!(
        (1..=g.config().max_rounds).contains(&g.round()),
        "round {} outside 1..={}",
        g.round(),
        g.config().max_rounds
    );
    // (c) Every listed action of every seat is accepted, and so is every listed play with
    // another call word.
    let mut list = maumau_engine::ActionList::default();
    for s in 0..n {
        let legal = g.legal_actions(s);
        g.legal_actions_into(s, &mut list);
        ensure!(
            list == legal,
            "legal_actions_into({s}) {list:?} != legal_actions({s}) {legal:?}"
        );
        let obs = g.observation(s);
        ensure!(
            obs.legal == legal,
            "observation({s}).legal {:?} != legal_actions {legal:?}",
            obs.legal
        );
        ensure!(
            obs.hand == *g.hand(s),
            "observation({s}).hand is not the seat's hand"
        );
        if over {
            ensure!(
                legal.is_empty(),
                "seat {s} lists {legal:?} after the match ended"
            );
            continue;
        }
        if Some(s) == g.to_act() {
            ensure!(!legal.is_empty(), "seat {s} must act but lists no action");
        } else {
            ensure!(
                legal
                    .iter()
                    .all(|a| matches!(a, Action::Challenge | Action::Announce(_))),
                "seat {s} is not to act but lists {legal:?}"
            );
        }
        let mut seen = HashSet::new();
        for &a in legal.iter() {
            ensure!(seen.insert(a), "seat {s} lists {a} twice: {legal:?}");
            let mut c = *g;
            let mut events = Vec::new();
            let r = c.apply_with(s, a, &mut events);
            ensure!(r.is_ok(), "listed action `{a}` of seat {s} rejected: {r:?}");
            ensure!(
                !events.is_empty(),
                "listed action `{a}` of seat {s} reported no event"
            );
            if let Action::Play { card, suit, call } = a {
                for other in Call::ALL {
                    if other != call {
                        let v = Action::Play {
                            card,
                            suit,
                            call: other,
                        };
                        let mut c = *g;
                        let r = c.apply_with(s, v, &mut ());
                        ensure!(
                            r.is_ok(),
                            "listed play `{a}` of seat {s} sent with call {other:?} rejected: {r:?}"
                        );
                    }
                }
            }
        }
    }
    // (c) An exhaustive sweep of the action space for one seat (sometimes a seat that does not
    // exist): accepted exactly when expected, and a rejection changes nothing.
    if rng.chance(1, 4) {
        let seat = if rng.chance(1, 10) {
            n
        } else {
            rng.below(n as usize) as Seat
        };
        for i in 0..ACTION_COUNT {
            let a = Action::from_index(i).expect("index in range");
            check_one_action(g, seat, a)?;
        }
    }
    // (e)
    let text = g.position();
    match Game::from_position(&text) {
        Ok(back) => ensure!(
            back == *g,
            "position round trip changed the state:\n  position: {text}\n  reparsed: {}",
            back.position()
        ),
        Err(e) => {
            return Err(format!(
                "position does not parse back: {e}\n  position: {text}"
            ));
        }
    }
    // (d)
    let observer = rng.below(n as usize) as Seat;
    let twin = hidden_permutation(g, observer, rng)?;
    ensure!(
        twin.observation(observer) == g.observation(observer),
        "observation({observer}) depends on hidden cards:\n  game: {text}\n  twin: {}\n  obs:  {:?}\n  twin: {:?}",
        twin.position(),
        g.observation(observer),
        twin.observation(observer)
    );
    Ok(())
}

/// (c) for one action: accepted exactly when expected; a rejection returns `Err`, reports no
/// event and leaves the state unchanged.
fn check_one_action(g: &Game, seat: Seat, a: Action) -> Result<(), String> {
    let expect = expected_accepted(g, seat, a);
    let mut c = *g;
    let mut events = Vec::new();
    let r = c.apply_with(seat, a, &mut events);
    match r {
        Ok(()) => ensure!(
            expect,
            "`{a}` by seat {seat} was accepted but is neither listed, nor a listed play with \
             another call, nor a penalised brazilian action; events {events:?}"
        ),
        Err(why) => {
            ensure!(
                !expect,
                "`{a}` by seat {seat} should be accepted but was rejected: {why:?}"
            );
            ensure!(
                events.is_empty(),
                "rejected `{a}` by seat {seat} reported events {events:?}"
            );
            ensure!(
                c == *g,
                "rejected `{a}` by seat {seat} ({why:?}) changed the state"
            );
        }
    }
    Ok(())
}

/// (d) for events: a viewer sees its own drawn cards and nobody else's; a spectator sees none;
/// nothing else is redacted.
fn check_event_visibility(e: &Event, seats: u8) -> Result<(), String> {
    if let Event::Drew { card, .. } = e {
        ensure!(
            card.is_some(),
            "the engine reported a drawn card as hidden: {e:?}"
        );
    }
    for viewer in (0..seats).map(Some).chain([None]) {
        let seen = event_for(e, viewer);
        match (*e, seen) {
            (
                Event::Drew { seat, card, cause },
                Event::Drew {
                    seat: s2,
                    card: c2,
                    cause: k2,
                },
            ) => {
                ensure!(
                    seat == s2 && cause == k2,
                    "event_for changed more than the card: {e:?} -> {seen:?}"
                );
                if viewer == Some(seat) {
                    ensure!(c2 == card, "seat {seat} does not see its own drawn card");
                } else {
                    ensure!(
                        c2.is_none(),
                        "viewer {viewer:?} sees seat {seat}'s drawn card: {seen:?}"
                    );
                }
            }
            _ => ensure!(seen == *e, "event_for changed {e:?} into {seen:?}"),
        }
    }
    Ok(())
}

/// `Observation::offence_of` predicts what an accepted play of the seat to move does: it opens
/// (or, under `enforce`, is penalised for) an offence exactly when marked, unless the round ended
/// in that step first. Among the listed actions only a romanian-32 J finish is ever marked.
fn check_offence_mark(
    before: &Game,
    seat: Seat,
    action: Action,
    listed: bool,
    events: &[Event],
) -> Result<(), String> {
    let marked = before.observation(seat).offence_of(before.rules(), action);
    let offended = events.iter().find_map(|e| match *e {
        Event::OffenceOpened { seat: s, kind } | Event::OffencePenalised { seat: s, kind }
            if s == seat =>
        {
            Some(kind)
        }
        _ => None,
    });
    let ended = events.iter().any(|e| matches!(e, Event::RoundEnded(_)));
    let is_play = matches!(action, Action::Play { .. }) && before.to_act() == Some(seat);
    if is_play && offended.is_some() {
        ensure!(
            marked == offended,
            "`{action}` opened {offended:?} but offence_of said {marked:?}"
        );
    }
    if marked.is_some() {
        ensure!(
            offended.is_some() || ended,
            "offence_of said {marked:?} for `{action}`, which opened none: {events:?}"
        );
    }
    if listed && marked.is_some() {
        let romanian_jack = before.config().profile == ProfileId::Romanian32
            && matches!(action, Action::Play { card, .. } if card.rank() == Rank::Jack);
        ensure!(
            romanian_jack,
            "listed `{action}` is marked {marked:?}: only a romanian-32 J finish may be"
        );
    }
    Ok(())
}

// ----- one game ------------------------------------------------------------------------------

/// What a game exercised, for the coverage check of the sweep.
#[derive(Default, Debug, Clone, Copy)]
struct Stats {
    steps: u64,
    counted: u64,
    rejected: u64,
    rounds: u64,
    outs: u64,
    blocked: u64,
    turn_cap_hits: u64,
    round_cap_hits: u64,
    offences: u64,
    challenges: u64,
    cures: u64,
    pending_outs: u64,
    rebuilds: u64,
    suits_declared: u64,
    false_calls: u64,
    false_accusations: u64,
    enforced: u64,
}

impl Stats {
    fn add(&mut self, o: &Stats) {
        self.steps += o.steps;
        self.counted += o.counted;
        self.rejected += o.rejected;
        self.rounds += o.rounds;
        self.outs += o.outs;
        self.blocked += o.blocked;
        self.turn_cap_hits += o.turn_cap_hits;
        self.round_cap_hits += o.round_cap_hits;
        self.offences += o.offences;
        self.challenges += o.challenges;
        self.cures += o.cures;
        self.pending_outs += o.pending_outs;
        self.rebuilds += o.rebuilds;
        self.suits_declared += o.suits_declared;
        self.false_calls += o.false_calls;
        self.false_accusations += o.false_accusations;
        self.enforced += o.enforced;
    }

    fn note(&mut self, e: &Event) {
        use maumau_engine::ChallengeOutcome;
        match e {
            Event::RoundEnded(r) => {
                self.rounds += 1;
                match r.end {
                    RoundEnd::Out(_) => self.outs += 1,
                    RoundEnd::Blocked => self.blocked += 1,
                }
            }
            Event::OffenceOpened { .. } => self.offences += 1,
            Event::Challenged {
                outcome: ChallengeOutcome::Caught { .. },
                ..
            } => self.challenges += 1,
            Event::Challenged {
                outcome: ChallengeOutcome::False,
                ..
            } => self.false_accusations += 1,
            Event::OffenceCured { .. } => self.cures += 1,
            Event::PendingOut { .. } => self.pending_outs += 1,
            Event::StockRebuilt { .. } => self.rebuilds += 1,
            Event::SuitDeclared { .. } => self.suits_declared += 1,
            Event::Announced { valid: false, .. } => self.false_calls += 1,
            Event::OffencePenalised { .. } => self.enforced += 1,
            _ => {}
        }
    }
}

/// Plays one game with every check; returns what it exercised or the first broken invariant.
fn run_case(case: &Case) -> Result<Stats, String> {
    run_case_inner(case).map_err(|e| {
        format!(
            "{e}\n  case: profile={} options={} seats={} calls={} max_turns={} max_rounds={} \
             seed={:#x} chooser={:#x}",
            case.config.profile,
            case.config.options.to_words(),
            case.config.seats,
            case.config.calls.name(),
            case.config.max_turns_per_round,
            case.config.max_rounds,
            case.seed,
            case.chooser
        )
    })
}

fn run_case_inner(case: &Case) -> Result<Stats, String> {
    let config = case.config;
    let mut all_events = Vec::new();
    let mut g = Game::new_with(config, case.seed, &mut all_events)
        .map_err(|e| format!("Game::new refused the config: {e}"))?;
    let mut chooser = Chooser {
        rng: SplitMix(SplitMix64::new(case.chooser)),
        // Only with few rounds: romanian-32 repeats its BLOCKED rounds, which score nothing.
        hoarder: case.chooser.is_multiple_of(4) && config.max_rounds <= 6,
    };
    let mut check_rng = SplitMix(SplitMix64::new(case.chooser ^ 0x5EED));
    let mut stats = Stats::default();
    all_events.iter().for_each(|e| stats.note(e));
    let mut replay: Vec<(Seat, Action)> = Vec::new();
    let t = u64::from(config.max_turns_per_round);
    let r = u64::from(config.max_rounds);
    let per_round = 4 * t + 1;
    let bound = r * per_round;
    let mut in_round = 0u64;
    let mut history: Vec<String> = Vec::new();
    check_state(&g, &mut check_rng).map_err(|e| format!("{e}\n  at the deal"))?;
    while let Some(mover) = g.to_act() {
        let (seat, action, why) = chooser.choose(&g, mover);
        let before = g;
        let before_text = g.position();
        let listed = seat < g.seats() && g.legal_actions(seat).contains(&action);
        let variant = is_call_variant(&g, seat, action);
        let penal = is_penalised_ok(&g, seat, action);
        let mut events = Vec::new();
        let result = g.apply_with(seat, action, &mut events);
        stats.steps += 1;
        let step = stats.steps;
        let context = |history: &[String]| {
            format!(
                "\n  step {step} ({why:?}): seat {seat} sends `{action}`\n  before: {before_text}\n  \
                 last accepted actions: {}",
                history.join("; ")
            )
        };
        match result {
            Ok(()) => {
                ensure!(
                    listed || variant || penal,
                    "`{action}` by seat {seat} was accepted but is neither listed, nor a listed \
                     play with another call, nor a penalised brazilian action; events \
                     {events:?}{}",
                    context(&history)
                );
                replay.push((seat, action));
                history.push(format!("{seat}:{action}"));
                if history.len() > 12 {
                    history.remove(0);
                }
                for e in &events {
                    check_event_visibility(e, g.seats()).map_err(|m| m + &context(&history))?;
                    stats.note(e);
                }
                if listed || variant {
                    stats.counted += 1;
                    in_round += 1;
                }
                check_offence_mark(&before, seat, action, listed, &events)
                    .map_err(|m| m + &context(&history))?;
                let round_over = events.iter().any(|e| matches!(e, Event::RoundEnded(_)));
                if round_over {
                    ensure!(
                        in_round <= per_round,
                        "a round took {in_round} listed actions, above 4T+1 = {per_round}{}",
                        context(&history)
                    );
                    in_round = 0;
                    if before.turns() + 1 >= config.max_turns_per_round
                        && events.iter().any(
                            |e| matches!(e, Event::RoundEnded(x) if x.end == RoundEnd::Blocked),
                        )
                    {
                        stats.turn_cap_hits += 1;
                    }
                }
                ensure!(
                    (g.phase() == Phase::Over) == matches!(events.last(), Some(Event::MatchEnded)),
                    "phase {:?} but the last event is {:?}{}",
                    g.phase(),
                    events.last(),
                    context(&history)
                );
                if g.phase() == Phase::Over && g.round() >= config.max_rounds {
                    stats.round_cap_hits += 1;
                }
                all_events.extend(events);
            }
            Err(why_rejected) => {
                stats.rejected += 1;
                ensure!(
                    !(listed || variant || penal),
                    "`{action}` by seat {seat} should be accepted but was rejected: \
                     {why_rejected:?}{}",
                    context(&history)
                );
                ensure!(
                    events.is_empty(),
                    "rejected `{action}` reported events {events:?}{}",
                    context(&history)
                );
                ensure!(
                    g == before,
                    "rejected `{action}` ({why_rejected:?}) changed the state{}",
                    context(&history)
                );
            }
        }
        // (g)
        ensure!(
            stats.counted <= bound,
            "{} listed actions, above the termination bound R*(4T+1) = {bound}{}",
            stats.counted,
            context(&history)
        );
        ensure!(
            in_round <= per_round,
            "{in_round} listed actions in this round, above 4T+1 = {per_round}{}",
            context(&history)
        );
        check_state(&g, &mut check_rng).map_err(|e| e + &context(&history))?;
    }
    // (f) Replay from scratch.
    let mut replayed_events = Vec::new();
    let mut again = Game::new_with(config, case.seed, &mut replayed_events)
        .map_err(|e| format!("replay: Game::new refused the config: {e}"))?;
    for (i, &(seat, action)) in replay.iter().enumerate() {
        again
            .apply_with(seat, action, &mut replayed_events)
            .map_err(|e| {
                format!("replay: accepted action {i} `{action}` by {seat} now rejected: {e:?}")
            })?;
    }
    if replayed_events != all_events {
        let i = replayed_events
            .iter()
            .zip(&all_events)
            .take_while(|(a, b)| a == b)
            .count();
        return Err(format!(
            "replay: events differ at event {i}: {:?} vs {:?}",
            replayed_events.get(i),
            all_events.get(i)
        ));
    }
    ensure!(again == g, "replay: the final state differs");
    Ok(stats)
}

// ----- the tests -----------------------------------------------------------------------------

fn case_strategy() -> impl Strategy<Value = Case> {
    (
        0usize..4,
        any::<u8>(),
        0usize..3,
        any::<u8>(),
        (any::<u8>(), any::<u16>(), any::<u16>()),
        any::<u64>(),
        any::<u64>(),
    )
        .prop_map(|(p, s, c, o, caps, seed, chooser)| make_case(p, s, c, o, caps, seed, chooser))
}

proptest! {
    #![proptest_config(ProptestConfig {
        cases: 64,
        failure_persistence: None,
        ..ProptestConfig::default()
    })]

    /// Random games of random configurations keep every invariant.
    #[test]
    fn random_games_keep_the_invariants(case in case_strategy()) {
        run_case(&case).map_err(TestCaseError::fail)?;
    }
}

/// Every profile, every seat count and every `calls` mode, each with a sample of options and of
/// caps: one seeded game each, so the coverage does not depend on the random draws above.
#[test]
fn every_profile_seat_count_and_calls_mode() {
    let mut total = Stats::default();
    let mut games = 0u64;
    let mut k = 0u64;
    for (p, profile) in ProfileId::ALL.into_iter().enumerate() {
        // penalty-points is swept twice: with the 52-card and the 32-card deck.
        let decks: &[u8] = if profile == ProfileId::PenaltyPoints {
            &[0, 1]
        } else {
            &[0]
        };
        for &deck_bit in decks {
            let (lo, hi) = seat_range(profile, options_for(profile, deck_bit));
            for seats in lo..=hi {
                for calls in 0..3 {
                    k += 1;
                    let mut mix = SplitMix(SplitMix64::new(k.wrapping_mul(0xA076_1D64_78BD_642F)));
                    // Options: the deck bit, plus a rotating sample of the others.
                    let bits = deck_bit | ((mix.next() as u8) & !1);
                    let bits = if profile == ProfileId::PenaltyPoints {
                        bits
                    } else {
                        mix.next() as u8
                    };
                    let caps = (k as u8 % 4, mix.next() as u16, mix.next() as u16);
                    let case = make_case(p, seats - lo, calls, bits, caps, mix.next(), mix.next());
                    assert_eq!(case.config.seats, seats);
                    match run_case(&case) {
                        Ok(s) => total.add(&s),
                        Err(e) => panic!("{e}"),
                    }
                    games += 1;
                }
            }
        }
    }
    eprintln!("{games} games: {total:?}");
    // The chooser must exercise the mechanics the invariants are about.
    assert!(total.outs > 0 && total.blocked > 0, "{total:?}");
    assert!(
        total.turn_cap_hits > 0 && total.round_cap_hits > 0,
        "{total:?}"
    );
    assert!(total.offences > 0 && total.challenges > 0, "{total:?}");
    assert!(total.rebuilds > 0 && total.rejected > 0, "{total:?}");
    assert!(
        total.enforced > 0 && total.false_accusations > 0,
        "{total:?}"
    );
}

/// The seat ranges used above are the ones of RULES.md (classic 2-6, penalty-points 2-6 or 2-4
/// with the 32-card deck, brazilian 4-8, romanian-32 2-4), and nothing outside them is accepted.
#[test]
fn seat_ranges_are_the_documented_ones() {
    let short = options_for(ProfileId::PenaltyPoints, 1);
    let expected = [
        (ProfileId::Classic, Options::default(), 2, 6),
        (ProfileId::PenaltyPoints, Options::default(), 2, 6),
        (ProfileId::PenaltyPoints, short, 2, 4),
        (ProfileId::Brazilian, Options::default(), 4, 8),
        (ProfileId::Romanian32, Options::default(), 2, 4),
    ];
    for (profile, options, lo, hi) in expected {
        assert_eq!(seat_range(profile, options), (lo, hi), "{profile}");
        for seats in 0..=10u8 {
            let mut c = MatchConfig::new(profile, seats);
            c.options = options;
            assert_eq!(
                Game::new(c, 1).is_ok(),
                (lo..=hi).contains(&seats),
                "{profile} with {seats} seats"
            );
        }
    }
}

/// A determinized game agrees with the observation it came from: the viewer sees exactly what
/// it saw, the card counts match, and cards are conserved.
#[test]
fn determinized_games_agree_with_the_observation() {
    use maumau_engine::{Game, MatchConfig, ProfileId};
    for profile in ProfileId::ALL {
        let seats = if profile == ProfileId::Brazilian {
            5
        } else {
            3
        };
        let mut game = Game::new(MatchConfig::new(profile, seats), 99).expect("valid");
        let mut step = 0u64;
        while let Some(seat) = game.to_act() {
            step += 1;
            if step > 400 {
                break;
            }
            for viewer in 0..seats {
                let obs = game.observation(viewer);
                let sample = obs.determinize(step * 31 + viewer as u64);
                // The generator state is the sample's own; everything the viewer sees agrees.
                let again = sample.observation(viewer);
                assert_eq!(again, obs, "{profile}: step {step}, viewer {viewer}");
                let cards: usize = (0..seats).map(|s| sample.hand(s).len()).sum::<usize>()
                    + sample.stock().len()
                    + sample.discard().len();
                assert_eq!(cards, sample.rules().deck_len());
            }
            let legal = game.legal_actions(seat);
            let pick = legal[(step as usize * 7) % legal.len()];
            game.apply(seat, pick).expect("legal");
        }
    }
}

// ----- a seat's own open window (RULES.md §1.9) -------------------------------------------------

/// A position in which the seat to act, `t`, holds one card that it may play, and its own omission
/// window is still open (its own skip gave it this turn): the family of positions where the next
/// offence is created by the play that closes the previous window. Classic, penalty-points (any
/// options but `no_mau_penalty`) and romanian-32, whose last card is a J (any other romanian finish
/// is a correct out). The other seats hold 1 to 5 cards; the rest is the stock.
fn own_window_position(profile: usize, option_bits: u8, seat_pick: u8, seed: u64) -> String {
    let profile = [
        ProfileId::Classic,
        ProfileId::PenaltyPoints,
        ProfileId::Romanian32,
    ][profile % 3];
    let mut options = options_for(profile, option_bits);
    options.mau_penalty = true;
    let (lo, hi) = seat_range(profile, options);
    let seats = lo + seat_pick % (hi - lo + 1);
    let mut config = MatchConfig::new(profile, seats);
    config.options = options;
    let start = Game::new(config, seed).expect("a valid configuration");
    let printed = start.position();
    let option_words = field(&printed, "options").expect("a printed position has options");

    let mut rng = SplitMix(SplitMix64::new(seed));
    let deck = expected_deck(&config);
    let mut cards: Vec<Card> = (0..52u8)
        .filter(|&i| deck[i as usize] > 0)
        .map(|i| {
            let (rank, suit) = (Rank::ALL[(i % 13) as usize], Suit::ALL[(i / 13) as usize]);
            Card::new(rank, suit)
        })
        .collect();
    rng.shuffle(&mut cards);
    let top = cards.pop().expect("a deck");
    let last = if profile == ProfileId::Romanian32 {
        |c: &Card, _: &Card| c.rank() == Rank::Jack
    } else {
        |c: &Card, top: &Card| c.suit() == top.suit()
    };
    let at = cards
        .iter()
        .position(|c| last(c, &top))
        .expect("every suit has more than one card");
    let last_card = cards.remove(at);
    let t = rng.below(seats as usize) as Seat;
    let hands: Vec<String> = (0..seats)
        .map(|s| {
            if s == t {
                return last_card.to_string();
            }
            let n = 1 + rng.below(5);
            cards_text(&cards.split_off(cards.len() - n))
        })
        .collect();
    let dir = if rng.chance(1, 2) { "cw" } else { "ccw" };
    let turns = rng.below(200);
    format!(
        "mm1 {profile} options={option_words} seats={seats} turn={t} dir={dir} turns={turns} \
         hands={} discard={top} stock=* offence={t}:omission",
        hands.join("/")
    )
}

/// Plays the last card from an [`own_window_position`] with every call word but the correct one
/// and checks the §1.9 reading: the earlier window expires, the play opens the next one, the seat
/// is pending-out and passed over; never an immediate win.
fn check_own_window(text: &str) -> Result<(), String> {
    let g = Game::from_position(text).map_err(|e| format!("{e}: {text}"))?;
    let t = g.to_act().ok_or("someone is to act")?;
    let card = g
        .hand(t)
        .iter()
        .next()
        .ok_or("the seat holds its last card")?;
    let suit = (card.rank() == Rank::Jack).then_some(Suit::Hearts);
    let correct = match g.config().profile {
        ProfileId::Romanian32 => None, // a J finish after no MAU_MAU is an offence whatever the call
        _ => Some(Call::MauMau),
    };
    for call in Call::ALL.into_iter().filter(|&c| Some(c) != correct) {
        let mut after = g;
        let events = after
            .apply(t, Action::Play { card, suit, call })
            .map_err(|r| format!("{call:?}: rejected {r:?}: {text}"))?;
        let at = |wanted: Event| events.iter().position(|e| *e == wanted);
        let why = |what: &str| format!("{call:?}: {what}: {events:?} after {text}");
        if events.iter().any(|e| matches!(e, Event::RoundEnded(_))) {
            return Err(why("the round ended at once"));
        }
        let expired = at(Event::OffenceExpired { seat: t }).ok_or_else(|| why("no expiry"))?;
        let opened = events
            .iter()
            .position(|e| matches!(e, Event::OffenceOpened { seat, .. } if *seat == t))
            .ok_or_else(|| why("no new window"))?;
        let pending = at(Event::PendingOut { seat: t }).ok_or_else(|| why("not pending-out"))?;
        if !(expired < opened && opened < pending) {
            return Err(why("window events out of order"));
        }
        if after.pending_out() != Some(t) || after.to_act() == Some(t) {
            return Err(why("the seat is not pending-out and passed over"));
        }
    }
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig {
        cases: 256,
        failure_persistence: None,
        ..ProptestConfig::default()
    })]

    /// A seat with an open window of its own that empties its hand without the call it owes is
    /// pending-out, never an immediate winner (RULES.md §1.9).
    #[test]
    fn own_open_window_last_card_is_pending_out(
        profile in 0usize..3,
        option_bits in any::<u8>(),
        seat_pick in any::<u8>(),
        seed in any::<u64>(),
    ) {
        let text = own_window_position(profile, option_bits, seat_pick, seed);
        check_own_window(&text).map_err(TestCaseError::fail)?;
    }
}
