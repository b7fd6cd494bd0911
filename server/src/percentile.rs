//! The one percentile every decision-time figure uses: the match report's `SeatStats` and
//! `maumau check-bot`'s report.

/// The `p`th percentile (0 to 100) of `sorted` (ascending) by nearest rank, rounded up: the
/// value at index `ceil((len - 1) * p / 100)`; the default value (zero) for no values.
///
/// ```
/// let ms = [1, 2, 3, 4, 5, 6, 7, 8, 9, 10];
/// assert_eq!(maumau_server::nearest_rank(&ms, 50), 6);
/// assert_eq!(maumau_server::nearest_rank(&ms, 100), 10);
/// assert_eq!(maumau_server::nearest_rank::<u32>(&[], 90), 0);
/// ```
pub fn nearest_rank<T: Copy + Default>(sorted: &[T], p: usize) -> T {
    match sorted.len() {
        0 => T::default(),
        n => sorted[((n - 1) * p.min(100)).div_ceil(100)],
    }
}
