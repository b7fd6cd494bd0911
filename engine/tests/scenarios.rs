//! Conformance tests: one test per scenario of RULES.md §5 ("Conformance scenarios").
//!
//! Each test is named after its scenario id. Positions are set up with the position notation
//! (`Game::from_position`), or with a stacked deck (`Game::from_deck`) where the scenario is about
//! the deal or the up-card. Unless a scenario says otherwise it uses RULES.md's defaults: 3 seats
//! (brazilian 4), phase START, totals 0, clockwise, no debt, no named suit, no open offence.
//!
//! `legal` turns `legal_actions(seat)` into the §5 notation: a sorted set of strings such as
//! `{"draw", "play 7C"}`, ignoring the call word and the suit a J names (and checking that every J
//! is offered with all four suits). CHALLENGE and the romanian late ANNOUNCE are left out, as §5
//! leaves them out of `legal(S)`; `all_actions` keeps them.
#![allow(
    clippy::expect_used,
    reason = "a test or bench fails loudly on a broken setup"
)]

use std::collections::{BTreeMap, BTreeSet};

use maumau_engine::profile::UpCardMode;
use maumau_engine::{
    Action, Call, Card, Event, Game, MatchConfig, Offence, OffenceKind, Phase, ProfileId, Rank,
    Rejection, RoundEnd, RoundResult, Seat, Suit,
};

// ----- helpers ---------------------------------------------------------------------------------

/// A game from a position in the notation of `maumau_engine::position`.
fn pos(text: &str) -> Game {
    Game::from_position(text).unwrap_or_else(|e| panic!("{e}: {text}"))
}

fn card(text: &str) -> Card {
    text.parse()
        .unwrap_or_else(|e| panic!("bad card `{text}`: {e}"))
}

/// Cards separated by spaces or commas.
fn cards(text: &str) -> Vec<Card> {
    text.split([' ', ','])
        .filter(|w| !w.is_empty())
        .map(card)
        .collect()
}

fn suit(letter: char) -> Suit {
    Suit::from_char(letter).unwrap_or_else(|| panic!("bad suit `{letter}`"))
}

/// PLAY with no call.
fn play(c: &str) -> Action {
    Action::play(card(c))
}

/// PLAY with a call.
fn play_call(c: &str, call: Call) -> Action {
    Action::Play {
        card: card(c),
        suit: None,
        call,
    }
}

/// PLAY of a J naming `named`.
fn jack(c: &str, named: char, call: Call) -> Action {
    Action::Play {
        card: card(c),
        suit: Some(suit(named)),
        call,
    }
}

/// Applies an action that must be accepted.
fn act(g: &mut Game, seat: Seat, a: Action) -> Vec<Event> {
    g.apply(seat, a)
        .unwrap_or_else(|r| panic!("seat {seat} `{a}` was rejected: {r:?}"))
}

/// Asserts that `a` by `seat` is rejected with `why` and changes nothing.
fn rejected(g: &Game, seat: Seat, a: Action, why: Rejection) {
    let mut after = *g;
    let result = after.apply(seat, a);
    assert_eq!(result, Err(why), "seat {seat} `{a}`");
    assert_eq!(
        after, *g,
        "the rejected `{a}` by seat {seat} changed the game"
    );
}

fn action_text(a: &Action) -> String {
    match *a {
        Action::Play { card, .. } => format!("play {card}"),
        Action::Draw => "draw".into(),
        Action::Pass => "pass".into(),
        Action::DeclareSuit(s) => format!("suit {s}"),
        Action::Announce(_) => "announce".into(),
        Action::Challenge => "challenge".into(),
    }
}

/// Every action `seat` may take without penalty, challenges and late cures included.
fn all_actions(g: &Game, seat: Seat) -> BTreeSet<String> {
    let list = g.legal_actions(seat);
    let mut jack_suits: BTreeMap<Card, BTreeSet<Suit>> = BTreeMap::new();
    for a in list.iter() {
        if let Action::Play {
            card,
            suit: Some(s),
            ..
        } = *a
        {
            jack_suits.entry(card).or_default().insert(s);
        }
    }
    for (j, suits) in jack_suits {
        assert_eq!(suits.len(), 4, "{j} must be offered naming every suit");
    }
    list.iter().map(action_text).collect()
}

/// `legal(S)` of RULES.md §5: the seat's unpenalised turn actions (no CHALLENGE, no late cure).
fn legal(g: &Game, seat: Seat) -> BTreeSet<String> {
    let mine = g.to_act() == Some(seat);
    all_actions(g, seat)
        .into_iter()
        .filter(|a| a != "challenge" && (a != "announce" || mine))
        .collect()
}

fn set(items: &[&str]) -> BTreeSet<String> {
    items.iter().map(|s| s.to_string()).collect()
}

/// The calls with which `card` is listed as a legal play for `seat`.
fn listed_calls(g: &Game, seat: Seat, c: &str) -> BTreeSet<Call> {
    let c = card(c);
    g.legal_actions(seat)
        .iter()
        .filter_map(|a| match *a {
            Action::Play { card, call, .. } if card == c => Some(call),
            _ => None,
        })
        .collect()
}

fn hand_len(g: &Game, seat: Seat) -> usize {
    g.hand(seat).len()
}

fn hand_sizes(g: &Game) -> Vec<usize> {
    (0..g.seats()).map(|s| hand_len(g, s)).collect()
}

fn holds(g: &Game, seat: Seat, text: &str) -> bool {
    cards(text).into_iter().all(|c| g.hand(seat).contains(c))
}

/// The result carried by the `RoundEnded` event among `events`.
fn round_result(events: &[Event]) -> RoundResult {
    events
        .iter()
        .find_map(|e| match e {
            Event::RoundEnded(r) => Some(*r),
            _ => None,
        })
        .expect("the round ended")
}

/// The events up to the end of the round (a new round may be dealt after it).
fn before_round_end(events: &[Event]) -> &[Event] {
    let end = events
        .iter()
        .position(|e| matches!(e, Event::RoundEnded(_)))
        .unwrap_or(events.len());
    &events[..end]
}

fn round_ended(events: &[Event]) -> bool {
    events.iter().any(|e| matches!(e, Event::RoundEnded(_)))
}

fn points(r: &RoundResult, seats: usize) -> Vec<i32> {
    r.points[..seats].to_vec()
}

fn totals(r: &RoundResult, seats: usize) -> Vec<i32> {
    r.totals[..seats].to_vec()
}

fn placings(g: &Game) -> Vec<u8> {
    let result = g.match_result().expect("the match is over");
    result.placings[..g.seats() as usize].to_vec()
}

fn winners(g: &Game) -> Vec<Seat> {
    g.match_result()
        .expect("the match is over")
        .winners()
        .collect()
}

fn offence(offender: Seat, kind: OffenceKind) -> Option<Offence> {
    Some(Offence { offender, kind })
}

fn config(profile: ProfileId, seats: u8) -> MatchConfig {
    MatchConfig::new(profile, seats)
}

/// Every card of the configuration's deck, copies included.
fn deck_of(config: &MatchConfig) -> Vec<Card> {
    let rules = config.rules().expect("a valid configuration");
    let mut deck = Vec::new();
    for s in Suit::ALL {
        for r in Rank::ALL {
            if r >= rules.low_rank {
                for _ in 0..rules.copies {
                    deck.push(Card::new(r, s));
                }
            }
        }
    }
    deck
}

fn take(pool: &mut Vec<Card>, c: Card) -> Card {
    let i = pool
        .iter()
        .position(|&x| x == c)
        .unwrap_or_else(|| panic!("{c} is used twice in the stacked deck"));
    pool.remove(i)
}

/// A whole deck in dealing order: the given hands (filled up to 5 cards from the rest of the
/// deck), then `up` as the up-card, then `stock_top` on top of the stock, then the rest.
fn stacked(
    config: &MatchConfig,
    dealer: Seat,
    hands: &[(Seat, &str)],
    up: &str,
    stock_top: &str,
) -> Vec<Card> {
    let rules = config.rules().expect("a valid configuration");
    let n = config.seats as usize;
    let mut pool = deck_of(config);
    let mut seat_hands: Vec<Vec<Card>> = vec![Vec::new(); n];
    for &(s, text) in hands {
        for c in cards(text) {
            seat_hands[s as usize].push(take(&mut pool, c));
        }
    }
    let up = take(&mut pool, card(up));
    let top: Vec<Card> = cards(stock_top)
        .into_iter()
        .map(|c| take(&mut pool, c))
        .collect();
    let size = rules.hand_size as usize;
    for h in &mut seat_hands {
        while h.len() < size {
            h.push(pool.remove(0));
        }
    }
    let first = match rules.up_card {
        UpCardMode::AsPlayByFirst => dealer as usize,
        _ => (dealer as usize + 1) % n,
    };
    let mut deck = Vec::new();
    for i in 0..size * n {
        deck.push(seat_hands[(first + i) % n][i / n]);
    }
    deck.push(up);
    deck.extend(top);
    deck.extend(pool);
    deck
}

fn dealt(config: MatchConfig, dealer: Seat, deck: &[Card]) -> Game {
    Game::from_deck(config, 7, dealer, deck, &mut ()).expect("the stacked deck is accepted")
}

/// Cards in hands, discard pile and stock.
fn layout(g: &Game) -> (usize, usize, usize) {
    let hands = (0..g.seats()).map(|s| hand_len(g, s)).sum();
    (hands, g.discard().len(), g.stock().len())
}

/// Every card in play, sorted.
fn all_cards(g: &Game) -> Vec<Card> {
    let mut v: Vec<Card> = (0..g.seats()).flat_map(|s| g.hand(s).iter()).collect();
    v.extend(g.discard().as_slice());
    v.extend(g.stock().as_slice());
    v.sort();
    v
}

fn sorted(mut v: Vec<Card>) -> Vec<Card> {
    v.sort();
    v
}

fn drew(events: &[Event], seat: Seat) -> Vec<Card> {
    events
        .iter()
        .filter_map(|e| match *e {
            Event::Drew {
                seat: s,
                card: Some(c),
                ..
            } if s == seat => Some(c),
            _ => None,
        })
        .collect()
}

// ----- classic -------------------------------------------------------------------------------

#[test]
fn cl_01_seven_chain_adds_two() {
    let mut g = pos("mm1 classic seats=4 turn=0 \
         hands=7H,6S,QD/7C,KD,3S/7S,4D,9C/JD,5C,2D,10H discard=9H stock=*");
    act(&mut g, 0, play("7H"));
    assert_eq!(g.debt(), 2);
    assert_eq!(g.to_act(), Some(1));
    assert_eq!(legal(&g, 1), set(&["play 7C", "draw"]));

    act(&mut g, 1, play("7C"));
    assert_eq!(g.debt(), 4);
    assert_eq!(g.to_act(), Some(2));

    act(&mut g, 2, play("7S"));
    assert_eq!(
        g.debt(),
        6,
        "a run of 7s adds 2 each time, it never doubles"
    );
    assert_eq!(g.to_act(), Some(3));
    assert_eq!(legal(&g, 3), set(&["draw"]));
    rejected(&g, 3, jack("JD", 'C', Call::None), Rejection::IllegalCard);

    let events = act(&mut g, 3, Action::Draw);
    assert_eq!(drew(&events, 3).len(), 6);
    assert_eq!(hand_len(&g, 3), 10);
    assert_eq!(g.debt(), 0);
    assert!(
        !events.iter().any(|e| matches!(e, Event::Played { .. })),
        "S3 plays nothing"
    );
    assert_eq!(g.to_act(), Some(0));
    assert_eq!(g.top(), card("7S"));
    assert_eq!(legal(&g, 0), set(&["play 6S"]));
    rejected(&g, 0, Action::Draw, Rejection::HoldsLegalPlay);
    assert_eq!(hand_sizes(&g), vec![2, 2, 2, 10]);
}

#[test]
fn cl_02_jack_of_diamonds_naming_clubs() {
    let mut g = pos("mm1 classic seats=4 turn=0 \
         hands=JD,8H,KS/5C,JS,9D,QD/2H,3H,4H/2S,3S,4S discard=6D stock=*");
    act(&mut g, 0, jack("JD", 'C', Call::None));
    assert_eq!(g.named_suit(), Some(Suit::Clubs));
    assert_eq!(g.to_act(), Some(1));
    assert_eq!(legal(&g, 1), set(&["play 5C", "play JS"]));
    rejected(&g, 1, play("9D"), Rejection::IllegalCard);
    rejected(&g, 1, play("QD"), Rejection::IllegalCard);

    act(&mut g, 1, jack("JS", 'H', Call::None));
    assert_eq!(g.named_suit(), Some(Suit::Hearts));
    assert_eq!(hand_len(&g, 1), 3);
    assert_eq!(g.to_act(), Some(2));
}

#[test]
fn cl_03_king_seven_two_score_nineteen() {
    let mut g = pos("mm1 classic seats=3 turn=0 hands=9S/KC,7D,2S/AH,10C discard=3S stock=*");
    let events = act(&mut g, 0, play_call("9S", Call::MauMau));
    let r = round_result(&events);
    assert_eq!(r.end, RoundEnd::Out(0));
    assert_eq!(r.winner(), Some(0));
    assert_eq!(points(&r, 3), vec![0, 19, 20]);
}

#[test]
fn cl_04_up_card_seven() {
    let cfg = config(ProfileId::Classic, 3);
    let deck = stacked(&cfg, 0, &[(1, "7C 2H 3H 4H 5H")], "7D", "");
    let g = dealt(cfg, 0, &deck);
    assert_eq!(g.top(), card("7D"));
    assert!(holds(&g, 1, "7C 2H 3H 4H 5H"));
    assert_eq!(g.debt(), 2);
    assert_eq!(g.to_act(), Some(1));
    assert_eq!(g.phase(), Phase::Start);
    assert_eq!(legal(&g, 1), set(&["play 7C", "draw"]));

    let mut answered = g;
    act(&mut answered, 1, play("7C"));
    assert_eq!(answered.debt(), 4);
    assert_eq!(answered.to_act(), Some(2));
}

#[test]
fn cl_04_up_card_seven_variant_draw() {
    let cfg = config(ProfileId::Classic, 3);
    let deck = stacked(&cfg, 0, &[(1, "7C 2H 3H 4H 5H")], "7D", "");
    let mut g = dealt(cfg, 0, &deck);
    act(&mut g, 1, Action::Draw);
    assert_eq!(hand_len(&g, 1), 7);
    assert_eq!(g.debt(), 0);
    assert_eq!(g.to_act(), Some(2));
}

#[test]
fn cl_05_up_card_eight_skips_the_first_player() {
    let cfg = config(ProfileId::Classic, 4);
    let g = dealt(cfg, 0, &stacked(&cfg, 0, &[], "8C", ""));
    assert_eq!(g.top(), card("8C"));
    assert_eq!(g.to_act(), Some(2), "S1 is skipped");
    assert_eq!(g.phase(), Phase::Start);
}

#[test]
fn cl_05_up_card_eight_variant_two_seats_dealer_starts() {
    let cfg = config(ProfileId::Classic, 2);
    let g = dealt(cfg, 0, &stacked(&cfg, 0, &[], "8C", ""));
    assert_eq!(g.top(), card("8C"));
    assert_eq!(
        g.to_act(),
        Some(0),
        "with 2 seats the dealer takes the first turn"
    );
    assert_eq!(g.phase(), Phase::Start);
}

#[test]
fn cl_06_up_card_jack_dealer_names_the_suit() {
    let cfg = config(ProfileId::Classic, 4);
    let deck = stacked(&cfg, 2, &[(3, "QH JC 9S 2D KS")], "JS", "");
    let mut g = dealt(cfg, 2, &deck);
    assert!(holds(&g, 3, "QH JC 9S 2D KS"));
    assert_eq!(g.phase(), Phase::AwaitSuit);
    assert_eq!(g.to_act(), Some(2));
    assert_eq!(legal(&g, 2), set(&["suit C", "suit D", "suit H", "suit S"]));
    for s in [0, 1, 3] {
        assert_eq!(all_actions(&g, s), set(&[]), "seat {s} has nothing to do");
    }
    rejected(&g, 3, play("QH"), Rejection::AwaitingSuit);
    rejected(&g, 3, Action::Draw, Rejection::AwaitingSuit);
    rejected(
        &g,
        3,
        Action::DeclareSuit(Suit::Hearts),
        Rejection::NotYourTurn,
    );
    rejected(&g, 0, Action::Challenge, Rejection::AwaitingSuit);
    rejected(&g, 2, Action::Draw, Rejection::AwaitingSuit);
    rejected(&g, 1, Action::Announce(Call::Mau), Rejection::AwaitingSuit);

    act(&mut g, 2, Action::DeclareSuit(Suit::Hearts));
    assert_eq!(g.named_suit(), Some(Suit::Hearts));
    assert_eq!(g.to_act(), Some(3));
    assert_eq!(g.phase(), Phase::Start);
    assert_eq!(legal(&g, 3), set(&["play QH", "play JC"]));
    rejected(&g, 3, play("9S"), Rejection::IllegalCard);
    rejected(&g, 3, play("KS"), Rejection::IllegalCard);
}

#[test]
fn cl_07_eight_skip_two_seats_same_seat_plays_again() {
    let mut g = pos("mm1 classic seats=2 turn=0 hands=8S,8D,KH/2C,3C,4C discard=4S stock=*");
    let before = g.turns();
    act(&mut g, 0, play("8S"));
    assert_eq!(g.to_act(), Some(0));
    assert_eq!(g.phase(), Phase::Start);
    assert_eq!(g.turns(), before + 1, "a new turn");
    assert_eq!(legal(&g, 0), set(&["play 8D"]));
}

#[test]
fn cl_07_eight_skip_variant_four_seats() {
    let mut g = pos("mm1 classic seats=4 turn=1 \
         hands=2C,3C,4C/8H,2D,3D/2S,3S,4S/5C,6C,9C discard=5H stock=*");
    let events = act(&mut g, 1, play("8H"));
    assert!(events.contains(&Event::Skipped { seat: 2 }));
    assert_eq!(g.to_act(), Some(3));
}

#[test]
fn cl_08_no_voluntary_draw() {
    let g = pos("mm1 classic seats=3 turn=1 hands=2C,4C,5C/3H,KC/2S,3S,4S discard=10H stock=*");
    assert_eq!(legal(&g, 1), set(&["play 3H"]));
    rejected(&g, 1, Action::Draw, Rejection::HoldsLegalPlay);
}

#[test]
fn cl_09_draw_then_only_the_drawn_card() {
    let mut g =
        pos("mm1 classic seats=3 turn=1 hands=2C,4C,5C/3C,KC/2S,3S,4S discard=10H stock=5H,6S");
    act(&mut g, 1, Action::Draw);
    assert_eq!(hand_len(&g, 1), 3);
    assert!(holds(&g, 1, "5H"));
    assert_eq!(g.phase(), Phase::AfterDraw);
    assert_eq!(legal(&g, 1), set(&["play 5H", "pass"]));

    act(&mut g, 1, Action::Pass);
    assert_eq!(g.to_act(), Some(2));
    assert_eq!(hand_len(&g, 1), 3);
}

#[test]
fn cl_09_draw_variant_unplayable_card_ends_the_turn() {
    let mut g =
        pos("mm1 classic seats=3 turn=1 hands=2C,4C,5C/3C,KC/2S,3S,4S discard=10H stock=6S,*");
    let events = act(&mut g, 1, Action::Draw);
    assert_eq!(drew(&events, 1), vec![card("6S")]);
    assert_eq!(g.to_act(), Some(2), "the turn ends by itself");
    assert_eq!(g.phase(), Phase::Start);
    assert_eq!(hand_len(&g, 1), 3);
}

#[test]
fn cl_10_jack_or_eight_does_not_cancel_a_debt() {
    let mut g = pos("mm1 classic seats=3 turn=1 debt=2 \
         hands=2C,3C,4C/JC,8D,4S/7H,2D,KH discard=7D stock=KD,7S,*");
    assert_eq!(legal(&g, 1), set(&["draw"]));
    rejected(&g, 1, jack("JC", 'D', Call::None), Rejection::IllegalCard);
    rejected(&g, 1, play("8D"), Rejection::IllegalCard);

    act(&mut g, 1, Action::Draw);
    assert!(holds(&g, 1, "KD 7S"));
    assert_eq!(hand_len(&g, 1), 5);
    assert_eq!(g.debt(), 0);
    assert_eq!(g.to_act(), Some(2), "S1 cannot play the 7S it drew");
    assert_eq!(g.top(), card("7D"));
    assert_eq!(legal(&g, 2), set(&["play 7H", "play 2D"]));

    act(&mut g, 2, play("7H"));
    assert_eq!(g.debt(), 2);
    assert_eq!(g.to_act(), Some(0));
}

#[test]
fn cl_11_rebuild_during_a_debt_payment_keeps_the_top_card() {
    let mut g = pos("mm1 classic seats=3 turn=2 debt=4 \
         hands=2H,3H,4H/2S,3S,4S/2C,3D,5S discard=4C,9H,KS,7H,7C stock=QD");
    let events = act(&mut g, 2, Action::Draw);
    assert!(events.contains(&Event::StockRebuilt { size: 4 }));
    let got = drew(&events, 2);
    assert_eq!(got.len(), 4);
    assert_eq!(got[0], card("QD"), "the stock's own card comes first");
    assert_eq!(hand_len(&g, 2), 7);
    assert_eq!(g.stock().len(), 1);
    assert_eq!(g.discard().as_slice(), &[card("7C")]);
    assert_eq!(g.top(), card("7C"));
    assert_eq!(g.debt(), 0);
    assert_eq!(g.to_act(), Some(0));
    // The new stock was the shuffled {4C, 9H, KS, 7H}: three went to S2, one is left.
    let mut rebuilt = got[1..].to_vec();
    rebuilt.extend(g.stock().as_slice());
    assert_eq!(sorted(rebuilt), sorted(cards("4C 9H KS 7H")));
}

#[test]
fn cl_13_forced_draw_impossible_blocks_the_round() {
    let mut g = pos("mm1 classic seats=3 dealer=1 turn=1 debt=2 \
         hands=KC,7D,2S/AH/QS,3H discard=7C stock=-");
    let events = act(&mut g, 1, Action::Draw);
    let r = round_result(&events);
    assert_eq!(r.end, RoundEnd::Blocked);
    assert_eq!(r.winner(), None);
    assert_eq!(points(&r, 3), vec![19, 10, 13]);
    assert_eq!(totals(&r, 3), vec![19, 10, 13]);
    assert_eq!(g.rounds_won(), &[0, 0, 0], "nobody won the round");
    assert_eq!(g.round(), 2);
    assert_eq!(g.dealer(), 2, "the next round's dealer is d+1");
}

#[test]
fn cl_15_mau_omission_challenged_in_the_window() {
    let mut g = pos("mm1 classic seats=3 turn=0 hands=4H,KS/9H,2D,3D/2S,3S,4S discard=4C stock=*");
    assert_eq!(listed_calls(&g, 0, "4H"), BTreeSet::from([Call::Mau]));
    act(&mut g, 0, play("4H"));
    assert_eq!(hand_len(&g, 0), 1);
    assert_eq!(g.to_act(), Some(1));
    assert_eq!(g.offence(), offence(0, OffenceKind::Omission));
    assert_eq!(g.pending_out(), None);

    act(&mut g, 2, Action::Challenge);
    assert_eq!(hand_len(&g, 0), 3);
    assert_eq!(g.offence(), None);
    assert_eq!(g.to_act(), Some(1));
}

#[test]
fn cl_15_mau_omission_variant_too_late() {
    let mut g = pos("mm1 classic seats=3 turn=0 hands=4H,KS/9H,2D,3D/2S,3S,4S discard=4C stock=*");
    act(&mut g, 0, play("4H"));
    act(&mut g, 1, play("9H"));
    assert_eq!(g.offence(), None);
    rejected(&g, 2, Action::Challenge, Rejection::NoOpenOffence);
    assert_eq!(hand_len(&g, 0), 1);
    assert_eq!(g.to_act(), Some(2));
}

#[test]
fn cl_15_mau_omission_variant_called() {
    let mut g = pos("mm1 classic seats=3 turn=0 hands=4H,KS/9H,2D,3D/2S,3S,4S discard=4C stock=*");
    act(&mut g, 0, play_call("4H", Call::Mau));
    assert_eq!(g.offence(), None);
    rejected(&g, 2, Action::Challenge, Rejection::NoOpenOffence);
    assert_eq!(hand_len(&g, 0), 1);
}

const CL_16: &str = "mm1 classic seats=3 turn=0 hands=7S/KC,7D,2S/5H discard=3S stock=3H,4H,*";

#[test]
fn cl_16_called_special_last_card_charges_nothing() {
    let mut g = pos(CL_16);
    let events = act(&mut g, 0, play_call("7S", Call::MauMau));
    let r = round_result(&events);
    assert_eq!(r.end, RoundEnd::Out(0));
    let play = before_round_end(&events);
    assert!(drew(play, 1).is_empty(), "S1 draws nothing");
    assert!(
        !play.iter().any(|e| matches!(
            e,
            Event::TurnStarted { seat: 1 } | Event::Played { seat: 1, .. }
        )),
        "S1 gets no chance to stack"
    );
    assert_eq!(points(&r, 3), vec![0, 19, 5]);
}

#[test]
fn cl_17_uncalled_last_card_challenged() {
    let mut g = pos(CL_16);
    act(&mut g, 0, play("7S"));
    assert_eq!(hand_len(&g, 0), 0);
    assert_eq!(g.pending_out(), Some(0));
    assert_eq!(g.offence(), offence(0, OffenceKind::Omission));
    assert_eq!(g.debt(), 2);
    assert_eq!(g.to_act(), Some(1));
    assert_eq!(legal(&g, 1), set(&["play 7D", "draw"]));
    assert_eq!(all_actions(&g, 1), set(&["play 7D", "draw", "challenge"]));
    assert_eq!(all_actions(&g, 2), set(&["challenge"]));
    assert_eq!(all_actions(&g, 0), set(&[]));
    rejected(&g, 0, Action::Challenge, Rejection::OwnOffence);

    let events = act(&mut g, 2, Action::Challenge);
    assert_eq!(drew(&events, 0), cards("3H 4H"));
    assert_eq!(hand_len(&g, 0), 2);
    assert_eq!(g.pending_out(), None);
    assert_eq!(g.offence(), None);
    assert!(!round_ended(&events));
    assert_eq!(g.debt(), 2);
    assert_eq!(g.to_act(), Some(1));
}

#[test]
fn cl_19_wrong_word_on_the_last_card_is_an_omission() {
    let mut wrong = pos(CL_16);
    let events = act(&mut wrong, 0, play_call("7S", Call::Mau));
    assert!(!round_ended(&events));
    assert_eq!(wrong.pending_out(), Some(0));
    let mut silent = pos(CL_16);
    act(&mut silent, 0, play("7S"));
    assert_eq!(wrong, silent, "the same state as CL-17");
}

#[test]
fn cl_21_match_end_and_a_shared_win() {
    let mut g = pos("mm1 classic seats=3 totals=70,80,95 turn=1 hands=10S/5D/7C discard=3D");
    let events = act(&mut g, 1, play_call("5D", Call::MauMau));
    let r = round_result(&events);
    assert_eq!(totals(&r, 3), vec![80, 80, 102]);
    assert!(events.contains(&Event::MatchEnded));
    assert_eq!(g.phase(), Phase::Over);
    assert_eq!(g.totals(), &[80, 80, 102]);
    assert_eq!(winners(&g), vec![0, 1], "co-winners at 80");
    assert_eq!(placings(&g), vec![1, 1, 3]);
}

#[test]
fn cl_21_match_end_variant_below_one_hundred_continues() {
    let mut g = pos("mm1 classic seats=3 totals=70,80,92 turn=1 hands=10S/5D/7C discard=3D");
    let events = act(&mut g, 1, play_call("5D", Call::MauMau));
    assert_eq!(totals(&round_result(&events), 3), vec![80, 80, 99]);
    assert!(!events.contains(&Event::MatchEnded));
    assert!(g.match_result().is_none());
    assert_ne!(g.phase(), Phase::Over);
    assert_eq!(g.round(), 2);
}

#[test]
fn cl_22_next_round_dealer_first_player_and_direction() {
    let mut g = pos("mm1 classic seats=4 dealer=0 dir=ccw turn=1 \
         hands=2C,3C/5D/4S,5S/6H discard=3D stock=*");
    let shuffles = g.rng_state().1;
    let events = act(&mut g, 1, play_call("5D", Call::MauMau));
    assert_eq!(round_result(&events).round, 1);
    assert!(events.contains(&Event::RoundStarted {
        round: 2,
        dealer: 1
    }));
    assert_eq!(g.round(), 2);
    assert_eq!(g.dealer(), 1);
    assert!(g.clockwise(), "dir goes back to CW");
    assert_eq!(g.debt() > 0, g.top().rank() == Rank::Seven);
    // First player S2, the new dealer's left, before the up-card's effect.
    match g.top().rank() {
        Rank::Eight => assert_eq!(g.to_act(), Some(3)),
        Rank::Jack => {
            assert_eq!(g.phase(), Phase::AwaitSuit);
            assert_eq!(g.to_act(), Some(1));
        }
        _ => assert_eq!(g.to_act(), Some(2)),
    }
    // A fresh shuffle of the whole deck.
    assert!(g.rng_state().1 > shuffles);
    assert_eq!(layout(&g), (20, 1, 31));
    assert_eq!(
        all_cards(&g),
        sorted(deck_of(&config(ProfileId::Classic, 4)))
    );
}

#[test]
fn cl_23_deal_counts() {
    for (seats, want) in [(4, (20, 1, 31)), (6, (30, 1, 21)), (2, (10, 1, 41))] {
        let cfg = config(ProfileId::Classic, seats);
        let g = dealt(cfg, 0, &stacked(&cfg, 0, &[], "5H", ""));
        assert_eq!(layout(&g), want, "{seats} seats");
        assert!((0..seats).all(|s| hand_len(&g, s) == 5));
    }
}

#[test]
fn cl_24_pending_out_seats_own_skip_lands_on_itself() {
    let mut g = pos("mm1 classic seats=2 turn=0 hands=8S/5S,9H discard=4S stock=*");
    let events = act(&mut g, 0, play("8S"));
    assert!(events.contains(&Event::PendingOut { seat: 0 }));
    assert!(
        !events.contains(&Event::TurnStarted { seat: 0 }),
        "a pending-out seat takes no turn"
    );
    assert_eq!(hand_len(&g, 0), 0);
    assert_eq!(g.pending_out(), Some(0));
    assert_eq!(g.to_act(), Some(1), "S0 is passed over");

    let events = act(&mut g, 1, play_call("5S", Call::Mau));
    let r = round_result(&events);
    assert_eq!(r.end, RoundEnd::Out(0), "the window closes and S0 wins");
    assert_eq!(points(&r, 2), vec![0, 9]);
}

/// The events of `events` among `wanted`, in order: what a test of an event order looks at.
fn only(events: &[Event], wanted: impl Fn(&Event) -> bool) -> Vec<&Event> {
    events.iter().filter(|e| wanted(e)).collect()
}

/// The window events and turn starts, in order.
fn window_events(events: &[Event]) -> Vec<&Event> {
    only(events, |e| {
        matches!(
            e,
            Event::OffenceExpired { .. }
                | Event::OffenceOpened { .. }
                | Event::PendingOut { .. }
                | Event::TurnStarted { .. }
                | Event::RoundEnded(_)
        )
    })
}

/// A seat whose own omission window is open takes the next turn (its own skip gave it the turn)
/// and plays its last card without MAU_MAU. The play closes the earlier window at the end of the
/// turn and is itself the next offence (RULES.md §1.9): the seat is pending-out, not the winner.
const OWN_WINDOW: &str = "mm1 classic seats=2 turn=0 hands=8S/QC,6C,9C \
     stock=6S,6H,AC,2D discard=8D offence=0:omission";

#[test]
fn own_open_window_uncalled_last_card_is_the_next_offence() {
    let mut g = pos(OWN_WINDOW);
    let events = act(&mut g, 0, play("8S"));
    assert!(!round_ended(&events), "no immediate win: {events:?}");
    assert_eq!(
        window_events(&events),
        vec![
            &Event::OffenceExpired { seat: 0 },
            &Event::OffenceOpened {
                seat: 0,
                kind: OffenceKind::Omission
            },
            &Event::PendingOut { seat: 0 },
            &Event::TurnStarted { seat: 1 },
        ]
    );
    assert_eq!(g.pending_out(), Some(0));
    assert_eq!(g.offence(), offence(0, OffenceKind::Omission));
    assert_eq!(g.to_act(), Some(1), "S0 is passed over");
    assert!(all_actions(&g, 1).contains("challenge"));

    let events = act(&mut g, 1, Action::Challenge);
    assert_eq!(drew(&events, 0), cards("6S 6H"), "S0 draws the penalty");
    assert_eq!(g.pending_out(), None, "and plays on");
    assert_eq!(g.offence(), None);
    assert!(!round_ended(&events));
    assert_eq!(g.to_act(), Some(1));
}

#[test]
fn own_open_window_uncalled_last_card_wins_when_the_new_window_closes() {
    let mut g = pos(OWN_WINDOW);
    act(&mut g, 0, play("8S"));
    act(&mut g, 1, Action::Draw);
    let events = act(&mut g, 1, Action::Pass);
    let r = round_result(&events);
    assert_eq!(r.end, RoundEnd::Out(0), "a deferred out, one turn later");
}

#[test]
fn own_open_window_variant_called_last_card_wins_at_once() {
    let mut g = pos(OWN_WINDOW);
    let events = act(&mut g, 0, play_call("8S", Call::MauMau));
    assert_eq!(round_result(&events).end, RoundEnd::Out(0));
    assert!(
        !events.contains(&Event::Skipped { seat: 1 }),
        "a last card's effect is not applied"
    );
}

#[test]
fn own_open_window_variant_penalty_points_ace_skips() {
    let mut g = pos(
        "mm1 penalty-points options=ace_skips seats=2 turn=0 hands=AS/QC,6C,9C \
         stock=6S,6H,AC,2D discard=AD offence=0:omission",
    );
    let events = act(&mut g, 0, play("AS"));
    assert!(!round_ended(&events), "no immediate win: {events:?}");
    assert!(events.contains(&Event::Skipped { seat: 1 }));
    assert!(events.contains(&Event::PendingOut { seat: 0 }));
    assert_eq!(g.pending_out(), Some(0));
    assert_eq!(g.to_act(), Some(1));
    let events = act(&mut g, 1, Action::Challenge);
    assert_eq!(drew(&events, 0), cards("6S 6H"));
    assert_eq!(g.pending_out(), None);
}

#[test]
fn own_open_window_variant_romanian_jack_finish() {
    let mut g = pos("mm1 romanian-32 seats=2 turn=0 hands=JS/QC,10C,9C \
         stock=7S,7H,AC,8C discard=8D offence=0:omission");
    let events = act(&mut g, 0, jack("JS", 'H', Call::None));
    assert!(!round_ended(&events), "no immediate win: {events:?}");
    assert_eq!(
        window_events(&events),
        vec![
            &Event::OffenceExpired { seat: 0 },
            &Event::OffenceOpened {
                seat: 0,
                kind: OffenceKind::JackFinish
            },
            &Event::PendingOut { seat: 0 },
            &Event::TurnStarted { seat: 1 },
        ]
    );
    assert_eq!(g.offence(), offence(0, OffenceKind::JackFinish));
    assert_eq!(g.to_act(), Some(1));
}

/// Our ruling where RULES.md is silent: the turn that reaches `max_turns_per_round` is resolved
/// first (an offending play opens its window and a seat that emptied its hand is pending-out),
/// then the limit ends the round as BLOCKED, closing that window under §1.9(d).
#[test]
fn turn_limit_on_an_offending_play_opens_the_window_then_blocks() {
    let mut g = pos(
        "mm1 classic seats=2 max_turns=5 turns=4 turn=0 hands=5S/QC,6C \
         discard=3S stock=*",
    );
    let events = act(&mut g, 0, play("5S"));
    assert_eq!(
        window_events(&events)[..3],
        [
            &Event::OffenceOpened {
                seat: 0,
                kind: OffenceKind::Omission
            },
            &Event::PendingOut { seat: 0 },
            &Event::RoundEnded(round_result(&events)),
        ]
    );
    let r = round_result(&events);
    assert_eq!(r.end, RoundEnd::Blocked, "the pending seat does not win");
    assert_eq!(
        points(&r, 2),
        vec![0, 16],
        "its empty hand scores as it stands"
    );
}

// ----- penalty-points ------------------------------------------------------------------------

#[test]
fn pp_01_card_values_with_52_cards() {
    let mut g = pos("mm1 penalty-points seats=3 turn=0 \
         hands=5D/JS,AH,QD,KC,2C,10H/3C discard=3D stock=*");
    let events = act(&mut g, 0, play_call("5D", Call::MauMau));
    assert_eq!(points(&round_result(&events), 3), vec![0, 63, 3]);
}

#[test]
fn pp_02_the_32_card_option() {
    let mut cfg = config(ProfileId::PenaltyPoints, 4);
    cfg.options = maumau_engine::Options::from_words("deck32").expect("a known option");
    let deck = deck_of(&cfg);
    assert_eq!(deck.len(), 32);
    let mut want = Vec::new();
    for s in Suit::ALL {
        for r in [
            Rank::Seven,
            Rank::Eight,
            Rank::Nine,
            Rank::Ten,
            Rank::Jack,
            Rank::Queen,
            Rank::King,
            Rank::Ace,
        ] {
            want.push(Card::new(r, s));
        }
    }
    assert_eq!(sorted(deck.clone()), sorted(want.clone()));
    let g = dealt(cfg, 0, &stacked(&cfg, 0, &[], "10H", ""));
    assert_eq!(layout(&g), (20, 1, 11));
    assert_eq!(all_cards(&g), sorted(want));
    // A 52-card deck is not this deck; a 2-6 card is not in it.
    let full = deck_of(&config(ProfileId::PenaltyPoints, 4));
    assert!(Game::from_deck(cfg, 7, 0, &full, &mut ()).is_err());
    assert!(
        Game::from_position("mm1 penalty-points options=deck32 seats=3 hands=2C/8C/9C discard=10C")
            .is_err()
    );

    let mut g = pos("mm1 penalty-points options=deck32 seats=3 turn=0 \
         hands=KD/7C,8D/AS,JH discard=QD stock=*");
    let events = act(&mut g, 0, play_call("KD", Call::MauMau));
    assert_eq!(points(&round_result(&events), 3), vec![0, 15, 31]);
}

#[test]
fn pp_03_the_seat_that_goes_out_scores_nothing() {
    let mut g = pos("mm1 penalty-points seats=3 totals=5,6,7 won=1,0,2 turn=2 \
         hands=KC,2H/QH/5D discard=3D stock=*");
    let events = act(&mut g, 2, play_call("5D", Call::MauMau));
    let r = round_result(&events);
    assert_eq!(r.end, RoundEnd::Out(2));
    assert_eq!(points(&r, 3), vec![12, 10, 0]);
    assert_eq!(totals(&r, 3), vec![17, 16, 7]);
    assert_eq!(g.rounds_won(), &[1, 0, 3]);
}

#[test]
fn pp_04_limit_reached_tie_broken_by_rounds_won() {
    let mut g = pos(
        "mm1 penalty-points seats=3 totals=60,75,90 won=3,1,0 turn=1 \
         hands=10S,5H/4D/QC,2D discard=3D stock=*",
    );
    let events = act(&mut g, 1, play_call("4D", Call::MauMau));
    assert_eq!(totals(&round_result(&events), 3), vec![75, 75, 102]);
    assert_eq!(g.phase(), Phase::Over);
    assert_eq!(g.rounds_won(), &[3, 2, 0]);
    assert_eq!(winners(&g), vec![0], "3 rounds won against 2");
    assert_eq!(placings(&g), vec![1, 2, 3]);
}

#[test]
fn pp_06_limit_150() {
    let at = |totals: &str, s0: &str, limit: &str| {
        pos(&format!(
            "mm1 penalty-points options={limit} seats=3 totals={totals} turn=2 \
             hands={s0}/10D/5D discard=3D stock=*"
        ))
    };
    let mut g = at("140,110,90", "9C", "limit150");
    let events = act(&mut g, 2, play_call("5D", Call::MauMau));
    assert_eq!(totals(&round_result(&events), 3), vec![149, 120, 90]);
    assert!(!events.contains(&Event::MatchEnded), "the match continues");
    assert_ne!(g.phase(), Phase::Over);
    assert_eq!(g.round(), 2);

    let mut g = at("140,110,90", "10C", "limit150");
    let events = act(&mut g, 2, play_call("5D", Call::MauMau));
    assert_eq!(totals(&round_result(&events), 3), vec![150, 120, 90]);
    assert_eq!(g.phase(), Phase::Over);
    assert_eq!(winners(&g), vec![2]);

    // The same first round under the default limit 100 would have ended the match.
    let mut g = at("140,110,90", "9C", "-");
    act(&mut g, 2, play_call("5D", Call::MauMau));
    assert_eq!(g.phase(), Phase::Over);
}

#[test]
fn pp_08_nine_reverses() {
    let mut g = pos("mm1 penalty-points options=nine_reverses seats=3 turn=0 \
         hands=9C,2C,3C/2S,3S,4S/2H,3H,4H discard=9D stock=*");
    act(&mut g, 0, play("9C"));
    assert!(!g.clockwise(), "dir CCW");
    assert_eq!(g.to_act(), Some(2));
}

#[test]
fn pp_08_nine_reverses_variant_two_seats() {
    let mut g = pos("mm1 penalty-points options=nine_reverses seats=2 turn=0 \
         hands=9C,2C,3C/2S,3S,4S discard=9D stock=*");
    act(&mut g, 0, play("9C"));
    assert!(!g.clockwise());
    assert_eq!(g.to_act(), Some(1), "no extra turn");
}

#[test]
fn pp_09_ace_skips() {
    let mut g = pos("mm1 penalty-points options=ace_skips seats=3 turn=0 \
         hands=AS,2C,3C/2S,3S,4S/2H,3H,4H discard=AH stock=*");
    act(&mut g, 0, play("AS"));
    assert_eq!(g.to_act(), Some(2));
}

#[test]
fn pp_09_ace_skips_variant_two_seats() {
    let mut g = pos("mm1 penalty-points options=ace_skips seats=2 turn=0 \
         hands=AS,8S,3C,4C/2D,3D,4D discard=AH stock=*");
    act(&mut g, 0, play("AS"));
    assert_eq!(g.to_act(), Some(0), "S0 plays again");
    assert_eq!(g.phase(), Phase::Start);
    act(&mut g, 0, play("8S"));
    assert_eq!(g.to_act(), Some(0), "the 8 still skips");
}

#[test]
fn pp_10_no_mau_penalty() {
    let mut g = pos("mm1 penalty-points options=no_mau_penalty seats=3 turn=0 \
         hands=4H,KS/9H,2D,3D/KH,5C,6C discard=4C stock=*");
    act(&mut g, 0, play("4H"));
    assert_eq!(g.offence(), None);
    rejected(&g, 1, Action::Challenge, Rejection::ChallengesDisabled);
    act(&mut g, 1, play("9H"));
    act(&mut g, 2, play("KH"));
    let events = act(&mut g, 0, play("KS"));
    let r = round_result(&events);
    assert_eq!(r.end, RoundEnd::Out(0), "S0 wins at once");
}

// ----- brazilian -----------------------------------------------------------------------------

#[test]
fn br_01_accusation_inside_the_window() {
    let mut g = pos("mm1 brazilian seats=5 turn=0 \
         hands=5H,9C/KS,2C,4D/2S,3S,4S,5S,6S/2D,3D,5D,6D,8D/8C,10C,QC,KC,AC \
         discard=3H stock=5S,*");
    act(&mut g, 0, play("5H"));
    assert_eq!(hand_len(&g, 0), 1);
    assert_eq!(g.offence(), offence(0, OffenceKind::NoAnnounce));
    assert!(
        all_actions(&g, 3).contains("challenge"),
        "S0 can be accused"
    );
    assert_eq!(g.to_act(), Some(1));

    let events = act(&mut g, 3, Action::Challenge);
    assert_eq!(drew(&events, 0).len(), 5);
    assert_eq!(hand_len(&g, 0), 6);
    assert_eq!(g.offence(), None);
    assert_eq!(g.to_act(), Some(1));
}

#[test]
fn br_03_correct_announcement() {
    let mut g = pos("mm1 brazilian seats=4 turn=0 \
         hands=5H,9C/2S,3S,4S/2D,3D,4D/8C,10C,QC discard=3H stock=*");
    assert_eq!(legal(&g, 0), set(&["play 5H", "draw", "announce"]));
    let events = act(&mut g, 0, Action::Announce(Call::MauMau));
    assert!(events.contains(&Event::Announced {
        seat: 0,
        call: Call::MauMau,
        valid: true
    }));
    assert_eq!(hand_len(&g, 0), 2, "a valid call costs nothing");
    assert_eq!(g.phase(), Phase::Announced);
    assert_eq!(legal(&g, 0), set(&["play 5H"]));
    rejected(&g, 0, Action::Draw, Rejection::MustPlayAfterAnnounce);

    act(&mut g, 0, play("5H"));
    assert_eq!(hand_len(&g, 0), 1);
    assert_eq!(g.offence(), None, "S0 cannot be accused");

    let events = act(&mut g, 2, Action::Challenge);
    assert_eq!(drew(&events, 2).len(), 5, "a false accusation costs 5");
    assert_eq!(hand_len(&g, 2), 8);
    assert_eq!(hand_len(&g, 0), 1);
}

#[test]
fn br_04_false_calls() {
    let mut g = pos("mm1 brazilian seats=4 turn=0 \
         hands=5H,9C,2S/2D,3D,4D/5S,6S,7S/8D,9D,KD discard=3H stock=2C,4S,6C,8S,10C,*");
    let events = act(&mut g, 0, Action::Announce(Call::MauMau));
    assert!(events.contains(&Event::Announced {
        seat: 0,
        call: Call::MauMau,
        valid: false
    }));
    assert_eq!(drew(&events, 0), cards("2C 4S 6C 8S 10C"));
    assert_eq!(hand_len(&g, 0), 8);
    assert_eq!(g.phase(), Phase::Start);
    assert_eq!(g.to_act(), Some(0));
    assert_eq!(legal(&g, 0), set(&["play 5H", "draw"]));
}

#[test]
fn br_04_false_calls_variant_two_cards_none_playable() {
    let mut g = pos("mm1 brazilian seats=4 turn=0 \
         hands=9C,2S/2D,3D,4D/5S,6S,7S/8D,9D,KD discard=3H stock=*");
    let events = act(&mut g, 0, Action::Announce(Call::MauMau));
    assert!(events.contains(&Event::Announced {
        seat: 0,
        call: Call::MauMau,
        valid: false
    }));
    assert_eq!(drew(&events, 0).len(), 5);
    assert_eq!(hand_len(&g, 0), 7);
}

const BR_05: &str = "mm1 brazilian seats=4 turn=0 \
     hands=8C,KS,2D/2S,3S,4S/5S,6S,7S/9H,10H,QH discard=8D stock=4C";

#[test]
fn br_05_voluntary_draw_then_pass() {
    let mut g = pos(BR_05);
    assert_eq!(legal(&g, 0), set(&["play 8C", "play 2D", "draw"]));
    act(&mut g, 0, Action::Draw);
    assert_eq!(hand_len(&g, 0), 4);
    assert_eq!(legal(&g, 0), set(&["play 8C", "play 2D", "pass"]));
    rejected(&g, 0, Action::Draw, Rejection::AlreadyDrew);
    act(&mut g, 0, Action::Pass);
    assert_eq!(g.to_act(), Some(1));
}

#[test]
fn br_05_voluntary_draw_variant_any_legal_card_after_the_draw() {
    let mut g = pos(BR_05);
    act(&mut g, 0, Action::Draw);
    act(&mut g, 0, play("2D"));
    assert_eq!(g.top(), card("2D"));
    assert_eq!(g.to_act(), Some(1));
}

#[test]
fn br_06_nine_makes_the_previous_player_draw_one() {
    let mut g = pos("mm1 brazilian seats=4 turn=2 \
         hands=2S,3S,4S/5S,6S,7S/9S,KD,3C/8D,10D,QD discard=9H stock=QC");
    let events = act(&mut g, 2, play("9S"));
    assert_eq!(drew(&events, 1), vec![card("QC")]);
    assert_eq!(hand_len(&g, 1), 4);
    assert_eq!(g.to_act(), Some(3));
}

#[test]
fn br_06_nine_variant_counter_clockwise() {
    let mut g = pos("mm1 brazilian seats=4 turn=2 dir=ccw \
         hands=2S,3S,4S/5S,6S,7S/9S,KD,3C/8D,10D,QD discard=9H stock=QC");
    let events = act(&mut g, 2, play("9S"));
    assert_eq!(drew(&events, 3), vec![card("QC")]);
    assert_eq!(hand_len(&g, 3), 4);
    assert_eq!(hand_len(&g, 1), 3);
    assert_eq!(g.to_act(), Some(1));
}

#[test]
fn br_07_queen_reverses() {
    let mut g = pos("mm1 brazilian seats=5 turn=2 \
         hands=2S,3S,4S/5H,6C,4C/QH,2C,3C/8D,10D,QD/2D,3D,4D discard=QS stock=*");
    act(&mut g, 2, play("QH"));
    assert!(!g.clockwise(), "dir CCW");
    assert_eq!(g.to_act(), Some(1));
    act(&mut g, 1, play("5H"));
    assert_eq!(g.to_act(), Some(0));
}

#[test]
fn br_08_ace_skips() {
    let mut g = pos("mm1 brazilian seats=4 turn=2 \
         hands=2S,3S,4S/5H,6C,4C/AC,2C,3C/8D,10D,QD discard=AD stock=*");
    let events = act(&mut g, 2, play("AC"));
    assert!(events.contains(&Event::Skipped { seat: 3 }));
    assert_eq!(g.to_act(), Some(0));
}

fn br_09(options: &str) -> Game {
    let mut g = pos(&format!(
        "mm1 brazilian options={options} seats=4 turn=1 debt=2 \
         hands=2S,3S,4S/JD,3S/JS,4C,9D/8H,10H,QH discard=7D stock=KC,2H,*"
    ));
    assert_eq!(legal(&g, 1), set(&["draw"]));
    rejected(&g, 1, jack("JD", 'C', Call::None), Rejection::IllegalCard);
    act(&mut g, 1, Action::Draw);
    assert!(holds(&g, 1, "KC 2H"));
    assert_eq!(hand_len(&g, 1), 4);
    assert_eq!(g.debt(), 0);
    assert_eq!(g.to_act(), Some(2));
    g
}

#[test]
fn br_09_jack_cannot_answer_a_seven() {
    let g = br_09("-");
    assert_eq!(legal(&g, 2), set(&["play 9D", "draw"]));
    rejected(&g, 2, jack("JS", 'D', Call::None), Rejection::IllegalCard);
}

#[test]
fn br_09_jack_variant_wild_on_paid_seven_option() {
    let g = br_09("jack_wild_on_paid_seven");
    assert_eq!(legal(&g, 2), set(&["play JS", "play 9D", "draw"]));
}

#[test]
fn br_12_scoring_and_placings() {
    let mut g = pos("mm1 brazilian seats=4 turn=2 \
         hands=JS,AH,5D/QC,KD/6C/10S discard=6S stock=*");
    let events = act(&mut g, 2, play("6C"));
    let r = round_result(&events);
    assert_eq!(r.end, RoundEnd::Out(2));
    assert_eq!(points(&r, 4), vec![36, 20, 0, 10]);
    assert_eq!(g.phase(), Phase::Over, "the game ends");
    assert_eq!(winners(&g), vec![2]);
    // Placings: S2, S3, S1, S0.
    assert_eq!(placings(&g), vec![4, 3, 1, 2]);
}

#[test]
fn br_13_last_card_seven_charges_nothing_and_needs_no_call() {
    let mut g = pos("mm1 brazilian seats=4 turn=0 \
         hands=7C/2S,3S,4S/5H,6H,8H/8D,10D,QD discard=2C stock=*");
    let events = act(&mut g, 0, play("7C"));
    let r = round_result(&events);
    assert_eq!(r.end, RoundEnd::Out(0));
    assert_eq!(g.phase(), Phase::Over);
    assert!(
        drew(before_round_end(&events), 1).is_empty(),
        "S1 draws nothing"
    );
    assert_eq!(hand_len(&g, 1), 3);
    assert_eq!(g.debt(), 0);
}

#[test]
fn br_16_deal_counts() {
    for (seats, want) in [(8, (40, 1, 63)), (4, (20, 1, 83))] {
        let cfg = config(ProfileId::Brazilian, seats);
        // F = S0: the deal starts at F, whose hand is the first card and every n-th after it.
        let deck = stacked(&cfg, 0, &[(0, "2C 3C 4C 5C 6C")], "5H", "");
        assert_eq!(deck[0], card("2C"));
        let g = dealt(cfg, 0, &deck);
        assert!(holds(&g, 0, "2C 3C 4C 5C 6C"), "{seats} seats");
        assert_eq!(layout(&g), want, "{seats} seats");
        assert!((0..seats).all(|s| hand_len(&g, s) == 5));
        assert_eq!(all_cards(&g), sorted(deck_of(&cfg)), "two decks, 104 cards");
    }
}

// ----- romanian-32 ---------------------------------------------------------------------------

#[test]
fn ro_01_sevens_stack_two_four_six() {
    let mut g = pos("mm1 romanian-32 seats=4 turn=0 \
         hands=7H,8C,10D/7C,QD,KD/7S,AD,QC/JD,KC,10S discard=9H stock=*");
    act(&mut g, 0, play("7H"));
    assert_eq!(g.debt(), 2);
    act(&mut g, 1, play("7C"));
    assert_eq!(g.debt(), 4);
    act(&mut g, 2, play("7S"));
    assert_eq!(g.debt(), 6);
    assert_eq!(legal(&g, 3), set(&["draw"]));
    let events = act(&mut g, 3, Action::Draw);
    assert_eq!(drew(&events, 3).len(), 6);
    assert_eq!(hand_len(&g, 3), 9);
    assert!(!events.iter().any(|e| matches!(e, Event::Played { .. })));
    assert_eq!(g.debt(), 0);
    assert_eq!(g.to_act(), Some(0));
}

#[test]
fn ro_02_eight_skips() {
    let mut g = pos("mm1 romanian-32 seats=3 turn=0 \
         hands=8S,10C,QC/7D,9D,KD/7H,9H,KH discard=8H stock=*");
    act(&mut g, 0, play("8S"));
    assert_eq!(g.to_act(), Some(2));
}

#[test]
fn ro_02_eight_skips_variant_two_seats() {
    let mut g = pos("mm1 romanian-32 seats=2 turn=0 hands=8S,10C,QC/7D,9D,KD discard=8H stock=*");
    let before = g.turns();
    act(&mut g, 0, play("8S"));
    assert_eq!(g.to_act(), Some(0), "a new turn");
    assert_eq!(g.phase(), Phase::Start);
    assert_eq!(g.turns(), before + 1);
}

#[test]
fn ro_03_nine_reverses() {
    let mut g = pos("mm1 romanian-32 seats=3 turn=0 \
         hands=9H,10C,QC/7D,9D,KD/10H,KC,AC discard=9C stock=*");
    act(&mut g, 0, play("9H"));
    assert!(!g.clockwise(), "dir CCW");
    assert_eq!(g.to_act(), Some(2));
    act(&mut g, 2, play("10H"));
    assert_eq!(g.to_act(), Some(1));
}

#[test]
fn ro_03_nine_reverses_variant_two_seats() {
    let mut g = pos("mm1 romanian-32 seats=2 turn=0 hands=9H,10C,QC/7D,9D,KD discard=9C stock=*");
    act(&mut g, 0, play("9H"));
    assert!(!g.clockwise(), "dir flips");
    assert_eq!(g.to_act(), Some(1), "no extra turn");
}

#[test]
fn ro_04_jacks() {
    let mut g = pos("mm1 romanian-32 seats=3 turn=1 \
         hands=7D,9D,KD/JH,8D/JC,9H discard=10C stock=*");
    assert_eq!(legal(&g, 1), set(&["play JH", "draw"]));
    assert_eq!(
        listed_calls(&g, 1, "JH"),
        BTreeSet::from([Call::Mau, Call::MauMau]),
        "a play that leaves 1 card: MAU or MAU_MAU"
    );
    act(&mut g, 1, jack("JH", 'S', Call::Mau));
    assert_eq!(g.named_suit(), Some(Suit::Spades));

    // The top is a J with named ♠, and S2 holds {J♣ 9♥}.
    assert_eq!(g.to_act(), Some(2));
    assert_eq!(legal(&g, 2), set(&["play JC", "draw"]));
    rejected(&g, 2, play("9H"), Rejection::IllegalCard);
}

#[test]
fn ro_04_jacks_variant_not_on_a_debt() {
    let g = pos("mm1 romanian-32 seats=3 turn=2 debt=2 \
         hands=8D,9D,KD/8H,QD/JC discard=7H stock=*");
    assert_eq!(legal(&g, 2), set(&["draw"]));
    rejected(&g, 2, jack("JC", 'H', Call::None), Rejection::IllegalCard);
}

#[test]
fn ro_05_voluntary_draw_then_only_the_drawn_card() {
    let mut g = pos("mm1 romanian-32 seats=3 turn=1 \
         hands=7D,10D,KD/9D,KH/7C,10C,QC discard=9S stock=8S");
    assert_eq!(legal(&g, 1), set(&["play 9D", "draw"]));
    act(&mut g, 1, Action::Draw);
    assert_eq!(legal(&g, 1), set(&["play 8S", "pass"]));
    rejected(&g, 1, play("9D"), Rejection::OnlyDrawnCard);
}

const RO_06: &str = "mm1 romanian-32 seats=3 turn=0 \
     hands=10D,KS/10H,8D,QC/7C,8C,9C discard=10C stock=*";

/// RO-06's opening: S0 keeps one card without a call.
fn ro_06() -> Game {
    let mut g = pos(RO_06);
    act(&mut g, 0, play("10D"));
    assert_eq!(hand_len(&g, 0), 1);
    assert_eq!(g.offence(), offence(0, OffenceKind::Omission));
    assert_eq!(g.to_act(), Some(1));
    g
}

#[test]
fn ro_06_mau_omission_caught() {
    let mut g = ro_06();
    let events = act(&mut g, 2, Action::Challenge);
    assert_eq!(drew(&events, 0).len(), 2);
    assert_eq!(hand_len(&g, 0), 3);
    assert_eq!(g.offence(), None);
    assert_eq!(g.to_act(), Some(1));
}

#[test]
fn ro_06_mau_omission_variant_cured() {
    let mut g = ro_06();
    assert!(all_actions(&g, 0).contains("announce"), "the late cure");
    act(&mut g, 0, Action::Announce(Call::Mau));
    assert_eq!(g.offence(), None, "the omission is cured");
    assert_eq!(g.last_call(0), Call::Mau);
    assert_eq!(g.to_act(), Some(1));
    rejected(&g, 2, Action::Challenge, Rejection::NoOpenOffence);
    assert_eq!(hand_len(&g, 0), 1);
}

#[test]
fn ro_06_mau_omission_variant_too_late() {
    let mut g = ro_06();
    act(&mut g, 1, play("10H"));
    rejected(&g, 2, Action::Challenge, Rejection::NoOpenOffence);
    assert_eq!(hand_len(&g, 0), 1);
}

/// The J finish is listed (it is legal: unchallenged, the seat wins), and its listing says that it
/// opens a jack-finish offence whatever the call; no other listed action is marked.
fn assert_jack_finish_marked(g: &Game, seat: Seat, j: &str) {
    let obs = g.observation(seat);
    let listed = g.legal_actions(seat);
    let marked: Vec<Action> = listed
        .iter()
        .copied()
        .filter(|&a| obs.offence_of(g.rules(), a).is_some())
        .collect();
    assert_eq!(marked.len(), 4, "the J naming each suit: {marked:?}");
    for a in marked {
        assert!(matches!(a, Action::Play { card, .. } if card == self::card(j)));
        assert_eq!(obs.offence_of(g.rules(), a), Some(OffenceKind::JackFinish));
    }
}

/// RO-07 steps 1 to 4: S0 calls only MAU, then finishes on a J.
fn ro_07() -> Game {
    let mut g = pos("mm1 romanian-32 seats=3 turn=0 \
         hands=QC,JD/AC,8H,10S,7D/10C,KD,7S,8S discard=QH stock=9D,10H");
    let events = act(&mut g, 0, play_call("QC", Call::Mau));
    assert!(drew(&events, 0).is_empty(), "no penalty for now");
    assert_eq!(g.offence(), None);
    assert_eq!(g.last_call(0), Call::Mau);
    act(&mut g, 1, play("AC"));
    act(&mut g, 2, play("10C"));
    assert_jack_finish_marked(&g, 0, "JD");
    let events = act(&mut g, 0, jack("JD", 'S', Call::None));
    assert!(!round_ended(&events));
    assert_eq!(hand_len(&g, 0), 0);
    assert_eq!(g.pending_out(), Some(0), "the last call was not MAU_MAU");
    assert_eq!(g.offence(), offence(0, OffenceKind::JackFinish));
    assert_eq!(g.named_suit(), Some(Suit::Spades));
    assert_eq!(g.to_act(), Some(1));
    g
}

#[test]
fn ro_07_jack_finish_after_only_mau_caught() {
    let mut g = ro_07();
    let events = act(&mut g, 2, Action::Challenge);
    assert_eq!(drew(&events, 0), cards("9D 10H"));
    assert_eq!(hand_len(&g, 0), 2);
    assert_eq!(g.pending_out(), None);
    assert!(!round_ended(&events), "play continues");
    assert_eq!(g.to_act(), Some(1));
    assert_eq!(g.named_suit(), Some(Suit::Spades));
}

#[test]
fn ro_07_jack_finish_variant_unchallenged_wins() {
    let mut g = ro_07();
    let events = act(&mut g, 1, play("10S"));
    let r = round_result(&events);
    assert_eq!(r.end, RoundEnd::Out(0), "the window closes and S0 wins");
    assert_eq!(points(&r, 3), vec![40, 0, 0]);
    assert_eq!(totals(&r, 3), vec![40, 0, 0]);
}

#[test]
fn ro_09_bluff_call() {
    let mut g = pos("mm1 romanian-32 seats=3 turn=0 \
         hands=10D,KS/7D,8D,9D/7H,8H,9H discard=10C stock=*");
    let events = act(&mut g, 0, play_call("10D", Call::MauMau));
    assert!(drew(&events, 0).is_empty(), "no penalty");
    assert_eq!(hand_len(&g, 0), 1);
    assert_eq!(g.offence(), None, "no offence");
    assert_eq!(g.last_call(0), Call::MauMau);
    rejected(&g, 2, Action::Challenge, Rejection::NoOpenOffence);
}

const RO_10: &str = "hands=KD/7C,10D,QH/JS,AC discard=QD stock=*";

#[test]
fn ro_10_scoring() {
    let mut g = pos(&format!("mm1 romanian-32 seats=3 turn=0 {RO_10}"));
    let events = act(&mut g, 0, play("KD"));
    let r = round_result(&events);
    assert_eq!(r.end, RoundEnd::Out(0));
    assert_eq!(points(&r, 3), vec![57, 0, 0]);
}

#[test]
fn ro_11_match_end() {
    let mut g = pos(&format!(
        "mm1 romanian-32 seats=3 totals=120,0,0 turn=0 {RO_10}"
    ));
    let events = act(&mut g, 0, play("KD"));
    assert_eq!(totals(&round_result(&events), 3), vec![177, 0, 0]);
    assert_eq!(g.phase(), Phase::Over);
    assert_eq!(winners(&g), vec![0]);
}

#[test]
fn ro_11_match_end_variant_exactly_150_wins() {
    let mut g = pos(&format!(
        "mm1 romanian-32 seats=3 totals=93,100,0 turn=0 {RO_10}"
    ));
    let events = act(&mut g, 0, play("KD"));
    assert_eq!(totals(&round_result(&events), 3), vec![150, 100, 0]);
    assert_eq!(g.phase(), Phase::Over);
    assert_eq!(winners(&g), vec![0]);
}

#[test]
fn ro_14_blocked_round_scores_nothing() {
    let mut g = pos(
        "mm1 romanian-32 seats=3 dealer=0 totals=10,20,30 turn=1 debt=2 \
         hands=KC,7D,8S/AH/QS,9H discard=7C stock=-",
    );
    let events = act(&mut g, 1, Action::Draw);
    let r = round_result(&events);
    assert_eq!(r.end, RoundEnd::Blocked);
    assert_eq!(points(&r, 3), vec![0, 0, 0], "no seat scores");
    assert_eq!(g.totals(), &[10, 20, 30]);
    assert_eq!(g.rounds_won(), &[0, 0, 0]);
    assert_eq!(g.round(), 2);
    assert_eq!(g.dealer(), 1, "the next round has dealer d+1");
}
