//! What a database must offer for the ladder's store to run on it: one transaction handle
//! ([`Tx`]) with the few primitives every store method is built from, and the store around it
//! ([`Backend`]: how it opens a transaction, and the PostgreSQL-only lease check).
//!
//! The methods themselves are written once, in `sql.rs`, over these primitives; `sqlite.rs` and
//! `postgres.rs` implement them for their clients and hold nothing else but their connections,
//! their migrations and (PostgreSQL) the work queue of `nodes.rs`.
//!
//! - **SQL text.** Statements are written once with SQLite's numbered placeholders (`?1`, `?2`);
//!   the PostgreSQL handle rewrites them to `$1`, `$2` before preparing ([`numbered_to_dollar`]).
//!   Where the dialects really differ (a seat list bound as a JSON array or as an array, an
//!   aggregate) both texts stand side by side at the one place that uses them
//!   ([`Dialect::pick`]).
//! - **Values.** Parameters are [`Value`]s and columns are read through [`Row`], so an integer
//!   is an `i64` on both sides: the PostgreSQL handle converts to and from the column's own width
//!   (`INTEGER`, `BIGINT`), SQLite stores booleans as integers.
//! - **New ids.** [`Tx::insert`] returns the new row's id (`last_insert_rowid()` on SQLite,
//!   `RETURNING id` on PostgreSQL) or, when a UNIQUE constraint refused the row, [`Taken`].
//! - **Locks.** SQLite has one writer, so row locks (`FOR UPDATE`, `FOR SHARE`, see
//!   [`Dialect::for_update`]) and the ratings' advisory lock ([`Tx::lock_ratings`]) are empty there.

use crate::error::{LadderError, Result};
use crate::ids::MatchId;

/// Which SQL a handle speaks, where the texts differ.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Dialect {
    /// SQLite: one writer, no row locks.
    Sqlite,
    /// PostgreSQL: row locks and advisory locks.
    Postgres,
}

impl Dialect {
    /// One of two texts of the same statement.
    pub(super) fn pick(self, sqlite: &'static str, postgres: &'static str) -> &'static str {
        match self {
            Dialect::Sqlite => sqlite,
            Dialect::Postgres => postgres,
        }
    }

    /// Appended to a `SELECT` whose rows the transaction is about to change.
    pub(super) fn for_update(self) -> &'static str {
        self.pick("", " FOR UPDATE")
    }

    /// Appended to a `SELECT` whose rows must not change until the transaction ends.
    pub(super) fn for_share(self) -> &'static str {
        self.pick("", " FOR SHARE")
    }
}

/// A parameter of a statement, or a column as read.
#[derive(Clone, Copy, Debug)]
pub(super) enum Value<'a> {
    /// SQL NULL.
    Null,
    /// An integer (stored at the column's width).
    Int(i64),
    /// A floating-point number.
    Real(f64),
    /// A boolean (an integer 0 or 1 on SQLite).
    Bool(bool),
    /// Text.
    Text(&'a str),
    /// Bytes.
    Blob(&'a [u8]),
    /// A list of ids, for `match_id IN (…)` (a JSON array on SQLite, an array on PostgreSQL).
    Ids(&'a [i64]),
}

impl From<i64> for Value<'_> {
    fn from(v: i64) -> Self {
        Value::Int(v)
    }
}

impl From<u32> for Value<'_> {
    fn from(v: u32) -> Self {
        Value::Int(i64::from(v))
    }
}

impl From<u8> for Value<'_> {
    fn from(v: u8) -> Self {
        Value::Int(i64::from(v))
    }
}

impl From<usize> for Value<'_> {
    fn from(v: usize) -> Self {
        Value::Int(v as i64)
    }
}

impl From<f64> for Value<'_> {
    fn from(v: f64) -> Self {
        Value::Real(v)
    }
}

impl From<bool> for Value<'_> {
    fn from(v: bool) -> Self {
        Value::Bool(v)
    }
}

impl<'a> From<&'a str> for Value<'a> {
    fn from(v: &'a str) -> Self {
        Value::Text(v)
    }
}

impl<'a> From<&'a String> for Value<'a> {
    fn from(v: &'a String) -> Self {
        Value::Text(v)
    }
}

impl<'a> From<&'a [u8]> for Value<'a> {
    fn from(v: &'a [u8]) -> Self {
        Value::Blob(v)
    }
}

impl<'a> From<&'a [i64]> for Value<'a> {
    fn from(v: &'a [i64]) -> Self {
        Value::Ids(v)
    }
}

impl<'a, T: Into<Value<'a>>> From<Option<T>> for Value<'a> {
    fn from(v: Option<T>) -> Self {
        v.map_or(Value::Null, Into::into)
    }
}

/// A UNIQUE constraint refused an insert; the constraint's name when the database says it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(super) struct Taken(pub(super) Option<String>);

/// One row of a result, by column index: each backend reads a column as a [`Value`]; the typed
/// reads are written once, here.
pub(super) trait Row {
    /// Column `i` as stored (booleans are integers on SQLite).
    fn cell(&self, i: usize) -> Result<Value<'_>>;

    /// An integer column that may be NULL.
    fn opt_i64(&self, i: usize) -> Result<Option<i64>> {
        match self.cell(i)? {
            Value::Null => Ok(None),
            Value::Int(v) => Ok(Some(v)),
            other => Err(bad("value for an integer", &format!("{other:?}"))),
        }
    }

    /// An integer column.
    fn i64(&self, i: usize) -> Result<i64> {
        self.opt_i64(i)?.ok_or_else(|| null(i))
    }

    /// An unsigned 32-bit column.
    fn u32(&self, i: usize) -> Result<u32> {
        let v = self.i64(i)?;
        u32::try_from(v).map_err(|_| bad("number", &v.to_string()))
    }

    /// A small unsigned column that may be NULL (a placing).
    fn opt_u8(&self, i: usize) -> Result<Option<u8>> {
        self.opt_i64(i)?
            .map(|v| u8::try_from(v).map_err(|_| bad("placing", &v.to_string())))
            .transpose()
    }

    /// A floating-point column.
    fn f64(&self, i: usize) -> Result<f64> {
        match self.cell(i)? {
            Value::Real(v) => Ok(v),
            Value::Int(v) => Ok(v as f64),
            Value::Null => Err(null(i)),
            other => Err(bad("value for a number", &format!("{other:?}"))),
        }
    }

    /// A boolean column that may be NULL.
    fn opt_bool(&self, i: usize) -> Result<Option<bool>> {
        match self.cell(i)? {
            Value::Null => Ok(None),
            Value::Bool(v) => Ok(Some(v)),
            Value::Int(v) => Ok(Some(v != 0)),
            other => Err(bad("value for a boolean", &format!("{other:?}"))),
        }
    }

    /// A boolean column.
    fn bool(&self, i: usize) -> Result<bool> {
        self.opt_bool(i)?.ok_or_else(|| null(i))
    }

    /// A text column that may be NULL.
    fn opt_string(&self, i: usize) -> Result<Option<String>> {
        match self.cell(i)? {
            Value::Null => Ok(None),
            Value::Text(v) => Ok(Some(v.to_string())),
            other => Err(bad("value for text", &format!("{other:?}"))),
        }
    }

    /// A text column.
    fn string(&self, i: usize) -> Result<String> {
        self.opt_string(i)?.ok_or_else(|| null(i))
    }

    /// A bytes column.
    fn blob(&self, i: usize) -> Result<Vec<u8>> {
        match self.cell(i)? {
            Value::Blob(v) => Ok(v.to_vec()),
            Value::Null => Err(null(i)),
            other => Err(bad("value for bytes", &format!("{other:?}"))),
        }
    }
}

/// An unexpected value read from the database.
pub(super) fn bad(what: &str, value: &str) -> LadderError {
    LadderError::Database(format!("unexpected {what} {value:?} in the database").into())
}

fn null(i: usize) -> LadderError {
    LadderError::Database(format!("unexpected NULL in column {i}").into())
}

/// What a query hands each of its rows to.
pub(super) type EachRow<'f> = &'f mut dyn FnMut(&dyn Row) -> Result<()>;

/// One open transaction. Statements use `?1`-style placeholders (see the module docs).
pub(super) trait Tx {
    /// The SQL this handle speaks.
    fn dialect(&self) -> Dialect;
    /// Runs a query and hands each row to `each`, in order.
    fn query_each(&mut self, sql: &str, params: &[Value<'_>], each: EachRow<'_>) -> Result<()>;
    /// Runs a statement; returns the rows it changed.
    fn execute(&mut self, sql: &str, params: &[Value<'_>]) -> Result<u64>;
    /// Runs an `INSERT` into a table with an `id` column; returns the new id, or [`Taken`] when a
    /// UNIQUE constraint refused the row.
    fn insert(&mut self, sql: &str, params: &[Value<'_>]) -> Result<Result<i64, Taken>>;
    /// Takes the lock that makes writers of ratings (finish, void, rerate) go one at a time, until
    /// the transaction ends (PostgreSQL; SQLite's one writer already does).
    fn lock_ratings(&mut self) -> Result<()>;
}

impl dyn Tx + '_ {
    /// Every row of a query, mapped.
    pub(super) fn rows<T>(
        &mut self,
        sql: &str,
        params: &[Value<'_>],
        mut map: impl FnMut(&dyn Row) -> Result<T>,
    ) -> Result<Vec<T>> {
        let mut out = Vec::new();
        self.query_each(sql, params, &mut |r| {
            out.push(map(r)?);
            Ok(())
        })?;
        Ok(out)
    }

    /// The first row of a query, mapped, if there is one.
    pub(super) fn opt<T>(
        &mut self,
        sql: &str,
        params: &[Value<'_>],
        map: impl FnOnce(&dyn Row) -> Result<T>,
    ) -> Result<Option<T>> {
        let mut map = Some(map);
        let mut out = None;
        self.query_each(sql, params, &mut |r| {
            if let Some(map) = map.take() {
                out = Some(map(r)?);
            }
            Ok(())
        })?;
        Ok(out)
    }

    /// The first row of a query that always returns one, mapped.
    pub(super) fn one<T>(
        &mut self,
        sql: &str,
        params: &[Value<'_>],
        map: impl FnOnce(&dyn Row) -> Result<T>,
    ) -> Result<T> {
        self.opt(sql, params, map)?.ok_or_else(|| {
            LadderError::Database(format!("no row returned by the statement {sql:?}").into())
        })
    }

    /// Whether `table` has a row with this id.
    pub(super) fn exists(&mut self, table: &str, id: i64) -> Result<bool> {
        let sql = format!("SELECT EXISTS (SELECT 1 FROM {table} WHERE id = ?1)");
        self.one(&sql, &[id.into()], |r| r.bool(0))
    }
}

/// A store: where its transactions come from.
pub(super) trait Backend: Send + Sync {
    /// Runs `f` in a transaction that only reads; commits if it returns `Ok`.
    fn read<T>(&self, f: impl FnOnce(&mut dyn Tx) -> Result<T>) -> Result<T>;
    /// Runs `f` in a transaction that writes; commits if it returns `Ok`.
    fn write<T>(&self, f: impl FnOnce(&mut dyn Tx) -> Result<T>) -> Result<T>;
    /// Fails unless the match's lease, if it has one, is held by this process (PostgreSQL's
    /// nodes; see `nodes.rs`). Called inside the transaction that records the match's end,
    /// after its row is locked.
    fn check_lease(&self, t: &mut dyn Tx, id: MatchId) -> Result<()>;
}

/// `?1`-style placeholders rewritten as PostgreSQL's `$1` (the SQL has no `?` elsewhere).
pub(super) fn numbered_to_dollar(sql: &str) -> String {
    let mut out = String::with_capacity(sql.len());
    let mut chars = sql.chars().peekable();
    while let Some(c) = chars.next() {
        if c == '?' && chars.peek().is_some_and(char::is_ascii_digit) {
            out.push('$');
        } else {
            out.push(c);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbered_placeholders_become_dollars() {
        assert_eq!(
            numbered_to_dollar("UPDATE t SET a = ?1 WHERE id = ?12 AND b = '?'"),
            "UPDATE t SET a = $1 WHERE id = $12 AND b = '?'"
        );
    }
}
