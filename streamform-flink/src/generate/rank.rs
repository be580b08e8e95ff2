//! A Rank in Flink SQL (docs/ranking.md): the ROW_NUMBER over the input in a subquery,
//! filtered by the query around it to the top, which Flink's planner turns into its rank
//! operator. The row number is selected out only when the plan emits it; otherwise Flink
//! prunes it, and its rank emits rows entering and leaving, as the plan says.
//!
//! Over an updating input Flink picks between two rank operators: the retracting one,
//! which keeps every row, and a faster one for an ordering it proves only ever moves rows
//! up (a count, a maximum, a sum of a column filtered to positive values), which emits
//! other changes. The simulator follows the retracting one, so the ordering is given a
//! last key, a copy of its first that Flink cannot prove anything of (`COALESCE(x, x)`): it
//! changes no row's place, and Flink runs the retracting rank (docs/flink-backend.md,
//! "Ranking"). A constant would not do: Flink 2.0 drops a constant key from the ordering.

use streamform_ir::{Field, RankStrategy, Ranking};

use crate::sql::ident;

/// The query of a Rank reading `from`, whose input columns are `input`; `number` is the
/// row number's column when the plan emits it. `plain` names an input column that is a time
/// attribute on Flink but not in the plan (a window table's time column, beside its
/// `window_time`): the rank's query gives it out cast to a plain timestamp.
pub(super) fn rank(
    from: &str,
    input: &[Field],
    partition_by: &[String],
    (ranking, plain): (&Ranking, Option<&str>),
    number: Option<&str>,
    i: usize,
) -> String {
    let number_name = match number {
        Some(n) => n.to_string(),
        None => {
            let mut name = "sf_row".to_string();
            while input.iter().any(|f| f.name == name) {
                name.push('_');
            }
            name
        }
    };
    let cols: Vec<String> = input.iter().map(|f| ident(&f.name)).collect();
    let cols = cols.join(", ");
    let partition = if partition_by.is_empty() {
        String::new()
    } else {
        let keys: Vec<String> = partition_by.iter().map(|k| ident(k)).collect();
        format!("PARTITION BY {} ", keys.join(", "))
    };
    let order: Vec<String> = ranking
        .order
        .iter()
        .map(|k| {
            format!(
                "{} {}",
                ident(&k.column),
                if k.descending { "DESC" } else { "ASC" }
            )
        })
        .collect();
    let n = ident(&number_name);
    let fresh = |base: &str| {
        let mut name = base.to_string();
        while input.iter().any(|f| f.name == name) || name == number_name {
            name.push('_');
        }
        name
    };
    let (order, from) = match (ranking.strategy, ranking.order.first()) {
        (RankStrategy::Retract, Some(first)) => {
            let tie = ident(&fresh("sf_retract"));
            let copy = ident(&first.column);
            let direction = if first.descending { "DESC" } else { "ASC" };
            (
                format!("{}, {tie} {direction}", order.join(", ")),
                format!(
                    "(SELECT {cols}, COALESCE({copy}, {copy}) AS {tie} FROM {from}) AS {}",
                    ident(&format!("retracting{i}"))
                ),
            )
        }
        _ => (order.join(", "), from.to_string()),
    };
    let outer: Vec<String> = input
        .iter()
        .map(|f| match plain {
            Some(p) if p == f.name => format!("CAST({c} AS TIMESTAMP(3)) AS {c}", c = ident(p)),
            _ => ident(&f.name),
        })
        .collect();
    let outer = match number {
        Some(_) => format!("{}, {n}", outer.join(", ")),
        None => outer.join(", "),
    };
    format!(
        "SELECT {outer} FROM (SELECT {cols}, ROW_NUMBER() OVER ({partition}ORDER BY {order}) AS {n} FROM {from}) AS {} WHERE {n} <= {}",
        ident(&format!("ranked{i}")),
        ranking.top
    )
}
