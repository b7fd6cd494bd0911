//! The heuristic bot does what issue 4 asks of it, shown on set positions: it always makes its
//! calls, challenges every omission it sees, keeps jacks for when it needs them, names the suit
//! it holds most, answers 7s when it can, plays 7s and skips against the seat closest to going
//! out, and sheds high-value cards.
#![allow(
    clippy::expect_used,
    reason = "a test or bench fails loudly on a broken setup"
)]

use maumau_bot_sdk::Bot;
use maumau_bot_sdk::bots::HeuristicBot;
use maumau_bot_sdk::engine::{Action, Call, Card, Game, Suit};

fn game(position: &str) -> Game {
    Game::from_position(position).unwrap_or_else(|e| panic!("{e}: {position}"))
}

fn card(text: &str) -> Card {
    text.parse().expect("a card")
}

/// The heuristic's turn action in `position`, for several seeds (the seed only breaks ties,
/// and none of these positions has a tie that matters): all must agree.
fn decide(position: &str) -> Action {
    let g = game(position);
    let seat = g.to_act().expect("a seat to act");
    let obs = g.observation(seat);
    let first = HeuristicBot::new(0).decide(&obs);
    for seed in 1..8 {
        assert_eq!(HeuristicBot::new(seed).decide(&obs), first, "seed {seed}");
    }
    assert!(obs.legal.contains(&first), "{first} is not legal");
    first
}

fn played(action: Action) -> (Card, Option<Suit>, Call) {
    match action {
        Action::Play { card, suit, call } => (card, suit, call),
        other => panic!("expected a play, got {other}"),
    }
}

#[test]
fn makes_its_calls() {
    // classic: MAU when one card is left, MAU_MAU on the last card.
    let (_, _, call) = played(decide(
        "mm1 classic seats=3 turn=0 hands=4H,KS/9H,2D,3D/5C,6C,8C discard=4C stock=*",
    ));
    assert_eq!(call, Call::Mau);
    let (c, _, call) = played(decide(
        "mm1 classic seats=3 turn=0 hands=KS/9H,2D,3D/4C,5C,6C discard=4S stock=*",
    ));
    assert_eq!((c, call), (card("KS"), Call::MauMau));
    // romanian-32: MAU_MAU when the card kept is a J, MAU otherwise.
    let (c, _, call) = played(decide(
        "mm1 romanian-32 seats=3 turn=0 hands=JH,9S/9H,7D,8D/KC,QC,AC discard=10S stock=*",
    ));
    assert_eq!((c, call), (card("9S"), Call::MauMau));
    let (c, _, call) = played(decide(
        "mm1 romanian-32 seats=3 turn=0 hands=8H,9S/9H,7D,8D/KC,QC,AC discard=10S stock=*",
    ));
    assert_eq!((c, call), (card("9S"), Call::Mau));
    // brazilian: the MAU-MAU call on the play that leaves one card.
    let (_, _, call) = played(decide(
        "mm1 brazilian seats=4 turn=0 hands=5H,9C/KS,2C,4D/3C,3D,3S/4C,4S,5S discard=3H stock=*",
    ));
    assert_eq!(call, Call::MauMau);
}

#[test]
fn challenges_every_omission_it_sees() {
    // S0 played its second-to-last card without MAU; S1 is to move and S2 watches.
    let g = game(
        "mm1 classic seats=3 turn=1 hands=KS/9H,2D,3D/5C,6C,8C discard=4C,4H \
         offence=0:omission stock=*",
    );
    for seat in [1, 2] {
        let obs = g.observation(seat);
        assert!(obs.legal.contains(&Action::Challenge), "seat {seat}");
        assert_eq!(
            HeuristicBot::new(3).react(&obs),
            Some(Action::Challenge),
            "seat {seat}"
        );
    }
    // Nothing to challenge: no reaction.
    let g = game("mm1 classic seats=3 turn=1 hands=KS,2S/9H,2D,3D/4C,5C,6C discard=4H stock=*");
    assert_eq!(HeuristicBot::new(3).react(&g.observation(2)), None);
}

#[test]
fn keeps_jacks_for_when_it_needs_them() {
    // Both the J and the 5 may be played: the 5 goes, the J stays.
    let (c, ..) = played(decide(
        "mm1 classic seats=2 turn=0 hands=JC,5H,9S/2D,3D,4D discard=5D stock=*",
    ));
    assert_eq!(c, card("5H"));
    // With nothing else to play, the J is played.
    let (c, ..) = played(decide(
        "mm1 classic seats=2 turn=0 hands=JC,2H,3H,9S/2D,3D,4D discard=5D stock=*",
    ));
    assert_eq!(c, card("JC"));
}

#[test]
fn names_the_suit_it_holds_most() {
    let (_, suit, _) = played(decide(
        "mm1 classic seats=2 turn=0 hands=JC,2H,3H,9S/2D,3D,4D discard=5D stock=*",
    ));
    assert_eq!(suit, Some(Suit::Hearts));
    let (_, suit, _) = played(decide(
        "mm1 penalty-points seats=3 turn=0 hands=JD,2S,3S,9S,KH/2D,3D/4C,6C discard=5C stock=*",
    ));
    assert_eq!(suit, Some(Suit::Spades));
    // An up-card J: the dealer names its suit.
    let action = decide(
        "mm1 classic seats=2 dealer=0 turn=0 phase=await_suit \
         hands=4C,6D,8D,QD,KS/2H,3H,4H,5H,6H discard=JS stock=*",
    );
    assert_eq!(action, Action::DeclareSuit(Suit::Diamonds));
}

#[test]
fn answers_sevens_when_it_can() {
    let (c, ..) = played(decide(
        "mm1 classic seats=3 turn=1 hands=2S,3S/7C,KS,QH/4C,5C discard=9D,7D debt=2 stock=*",
    ));
    assert_eq!(c, card("7C"));
    let (c, ..) = played(decide(
        "mm1 brazilian seats=4 turn=1 hands=2S,3S/7S,KC,QH/4C,5C/6D,6H discard=9D,7D debt=4 \
         stock=*",
    ));
    assert_eq!(c, card("7S"));
}

#[test]
fn plays_sevens_and_skips_against_the_seat_closest_to_going_out() {
    // S1, next after S0, is down to one card: the 8 (skip) and the 7 go first.
    let (c, ..) = played(decide(
        "mm1 classic seats=3 turn=0 hands=8H,KH,3C/2S/4D,5D,6D,9C,10C discard=5H stock=*",
    ));
    assert_eq!(c, card("8H"));
    let (c, ..) = played(decide(
        "mm1 classic seats=3 turn=0 hands=7H,KH,3C/2S/4D,5D,6D,9C,10C discard=5H stock=*",
    ));
    assert_eq!(c, card("7H"));
    // The seat after next is the one about to go out: the K is shed and the 8 kept.
    let (c, ..) = played(decide(
        "mm1 classic seats=3 turn=0 hands=8H,KH,3C/4D,5D,6D,9C,10C/2S discard=5H stock=*",
    ));
    assert_eq!(c, card("KH"));
    // brazilian: the A skips.
    let (c, ..) = played(decide(
        "mm1 brazilian seats=4 turn=0 hands=AH,KH,3C/2S/4D,5D,6D/9C,10C,8C discard=5H stock=*",
    ));
    assert_eq!(c, card("AH"));
}

#[test]
fn sheds_high_value_cards() {
    let (c, ..) = played(decide(
        "mm1 classic seats=2 turn=0 hands=2H,KH,5C/4D,5D,6D discard=9H stock=*",
    ));
    assert_eq!(c, card("KH"));
    // penalty-points: an A is worth 11, a K 10.
    let (c, ..) = played(decide(
        "mm1 penalty-points seats=2 turn=0 hands=AH,KH,5C/4D,5D,6D discard=9H stock=*",
    ));
    assert_eq!(c, card("AH"));
    // romanian-32: the winner collects the points held, so high cards go too.
    let (c, ..) = played(decide(
        "mm1 romanian-32 seats=3 turn=0 hands=9H,KH,7C/7D,8D,9D/AS,AD discard=10H stock=*",
    ));
    assert_eq!(c, card("KH"));
}
