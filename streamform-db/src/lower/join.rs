//! A regular join: the two sides' outputs as the inputs of one Join node (docs/joins.md).

use datafusion_expr::{Expr as DfExpr, JoinType};
use streamform_ir::{
    Boundedness, Changelog, DataType, JoinKind, KeyedState, Operator, State, join_schema,
};

use crate::diagnostic::Code;

use super::interval_join::{self, Timed};
use super::lowering::*;

impl Lowering<'_> {
    /// Joins `left` and `right` (each lowered already): ON's equalities between a left and
    /// a right column are the join key, the rest of ON its filter. The output's columns are
    /// the left's, then the right's (renamed where a name repeats, as Flink names them); it
    /// appends for an inner join of append inputs, and retracts for an outer join (a padded
    /// row is deleted when its match arrives); a regular join ends event time.
    /// Where the first JOIN's ON condition is written, for an error about it.
    pub(super) fn on_span(&self) -> Option<std::ops::Range<usize>> {
        use sqlparser::ast::{JoinConstraint, JoinOperator, SetExpr, Spanned, TableFactor};
        fn find(body: &SetExpr) -> Option<&sqlparser::ast::Expr> {
            let SetExpr::Select(s) = body else {
                return match body {
                    SetExpr::SetOperation { left, right, .. } => find(left).or_else(|| find(right)),
                    _ => None,
                };
            };
            let from = s.from.first()?;
            for j in &from.joins {
                if let JoinOperator::Join(JoinConstraint::On(e))
                | JoinOperator::Inner(JoinConstraint::On(e))
                | JoinOperator::Left(JoinConstraint::On(e))
                | JoinOperator::LeftOuter(JoinConstraint::On(e))
                | JoinOperator::Right(JoinConstraint::On(e))
                | JoinOperator::RightOuter(JoinConstraint::On(e))
                | JoinOperator::FullOuter(JoinConstraint::On(e)) = &j.join_operator
                {
                    return Some(e);
                }
            }
            match &from.relation {
                TableFactor::Derived { subquery, .. } => find(&subquery.body),
                _ => None,
            }
        }
        find(&self.query.body).and_then(|e| crate::sql::byte_span(self.text, e.span()))
    }

    pub(super) fn join(
        &mut self,
        j: &datafusion_expr::logical_plan::Join,
        left: Stream,
        right: Stream,
    ) -> Lowered<()> {
        let kind = match j.join_type {
            JoinType::Inner => JoinKind::Inner,
            JoinType::Left => JoinKind::Left,
            JoinType::Right => JoinKind::Right,
            JoinType::Full => JoinKind::Full,
            other => {
                return Err(self.err(
                    Code::UnsupportedSql,
                    format!("a {other} join is not supported yet"),
                    "write an INNER, LEFT, RIGHT or FULL JOIN … ON",
                ));
            }
        };
        // Whether column `c` is a side's time attribute.
        let time_column = |c: &datafusion_common::Column| {
            [(j.left.schema(), &left), (j.right.schema(), &right)]
                .iter()
                .any(|(df, stream)| {
                    df.index_of_column(c).ok().is_some_and(|i| {
                        stream.time.is_some()
                            && stream.schema.get(i).map(|f| &f.name) == stream.time.as_ref()
                    })
                })
        };
        let is_time = |e: &DfExpr| matches!(e, DfExpr::Column(c) if time_column(c));
        // The planner leaves ON whole in the filter: each conjunct `l = r` between a left
        // and a right column is a key pair, the rest stays the filter.
        let mut pairs: Vec<(DfExpr, DfExpr)> = j.on.clone();
        let mut rest: Vec<DfExpr> = Vec::new();
        if let Some(f) = &j.filter {
            let side_of = |e: &DfExpr| match e {
                DfExpr::Column(c) if j.left.schema().index_of_column(c).is_ok() => Some(0),
                DfExpr::Column(c) if j.right.schema().index_of_column(c).is_ok() => Some(1),
                _ => None,
            };
            for part in datafusion_expr::utils::split_conjunction(f) {
                match part {
                    // An equality of the two sides' time attributes is a time condition
                    // (an interval join of equal times), not a join key, as Flink reads it.
                    DfExpr::BinaryExpr(b)
                        if b.op == datafusion_expr::Operator::Eq
                            && is_time(&b.left)
                            && is_time(&b.right) =>
                    {
                        rest.push(part.clone());
                    }
                    DfExpr::BinaryExpr(b) if b.op == datafusion_expr::Operator::Eq => {
                        match (side_of(&b.left), side_of(&b.right)) {
                            (Some(0), Some(1)) => pairs.push((*b.left.clone(), *b.right.clone())),
                            (Some(1), Some(0)) => pairs.push((*b.right.clone(), *b.left.clone())),
                            _ => rest.push(part.clone()),
                        }
                    }
                    _ => rest.push(part.clone()),
                }
            }
        }
        // An equality between an expression of each side is no key Flink can hash.
        let sides_of = |e: &DfExpr| {
            let mut sides = [false, false];
            for c in e.column_refs() {
                sides[0] |= j.left.schema().index_of_column(c).is_ok();
                sides[1] |= j.right.schema().index_of_column(c).is_ok();
            }
            sides
        };
        // Only the time attributes (moved by an interval or not): a time condition.
        let only_time = |e: &DfExpr| {
            let refs = e.column_refs();
            !refs.is_empty() && refs.iter().all(|c| time_column(c))
        };
        let computed_key = rest.iter().any(|part| match part {
            DfExpr::BinaryExpr(b)
                if b.op == datafusion_expr::Operator::Eq
                    && !(only_time(&b.left) && only_time(&b.right)) =>
            {
                let (l, r) = (sides_of(&b.left), sides_of(&b.right));
                (l == [true, false] && r == [false, true])
                    || (l == [false, true] && r == [true, false])
            }
            _ => false,
        });
        let filter_expr = datafusion_expr::utils::conjunction(rest.clone());
        if pairs.is_empty() && computed_key {
            return Err(self
                .err(
                    Code::UnsupportedSql,
                    "the join's ON compares an expression of each side, and a join key must be a column on each side".into(),
                    "compute the expression as a column in a subquery of its side, and join on that column",
                )
                .with_span(self.on_span()));
        }
        let mut on: Vec<(String, String)> = Vec::with_capacity(j.on.len());
        for (l, r) in &pairs {
            let (DfExpr::Column(lc), DfExpr::Column(rc)) = (l, r) else {
                return Err(self.err(
                    Code::UnsupportedSql,
                    format!("the join compares `{l}` with `{r}`, and a join key must be a column on each side"),
                    "compute the expression as a column in a subquery of its side, and join on that column",
                ));
            };
            let side_column = |df: &datafusion_common::DFSchemaRef,
                               stream: &Stream,
                               c: &datafusion_common::Column| {
                df.index_of_column(c)
                    .ok()
                    .and_then(|i| stream.schema.get(i).cloned())
            };
            let (Some(lf), Some(rf)) = (
                side_column(j.left.schema(), &left, lc),
                side_column(j.right.schema(), &right, rc),
            ) else {
                return Err(self.err(
                    Code::Internal,
                    format!("the join's columns `{lc}` and `{rc}` could not be resolved"),
                    "this is a bug in Streamform's lowering, please report it with the model",
                ));
            };
            if lf.ty != rf.ty {
                return Err(self.err(
                    Code::TypeMismatch,
                    format!(
                        "the join compares `{}` ({}) with `{}` ({}), of another type",
                        lf.name, lf.ty, rf.name, rf.ty
                    ),
                    &if self.as_of_of(&right).is_some() {
                        // The versioned table is read as it is: the left side takes the cast.
                        format!(
                            "CAST the left side's column in a subquery of the left side so both have one type, CAST({} AS {}); the versioned table is read as it is",
                            lf.name,
                            rf.ty.sql_name()
                        )
                    } else {
                        format!(
                            "CAST one side in a subquery so both have one type, e.g. CAST({} AS {})",
                            rf.name,
                            lf.ty.sql_name()
                        )
                    },
                )
                .with_span(self.on_span()));
            }
            on.push((lf.name, rf.name));
        }
        let schema = join_schema(kind, &left.schema, &right.schema);
        for (field, original) in schema[left.schema.len()..].iter().zip(&right.schema) {
            if field.name != original.name {
                let user = self
                    .renamed
                    .get(&original.name)
                    .cloned()
                    .unwrap_or_else(|| original.name.clone());
                self.renamed.insert(field.name.clone(), user);
            }
        }
        // The filter reads the joined row, positionally as the planner's join schema.
        self.schema = schema.clone();
        let filter = match &filter_expr {
            Some(f) => {
                let e = self.expr(&j.schema, f)?;
                if e.data_type() != DataType::Boolean {
                    return Err(self.err(
                        Code::TypeMismatch,
                        format!("the join's condition `{e}` is {}, not a boolean", e.data_type()),
                        "a join's ON is a boolean condition: equal columns, and any comparison beside them with AND",
                    ));
                }
                Some(e)
            }
            None => None,
        };
        // A source read `FOR SYSTEM_TIME AS OF` the probe side's time: a temporal join.
        if let Some((source, as_of)) = self.as_of_of(&right) {
            let named = self.as_of_column(j, &left, &as_of)?;
            return self.temporal_join(kind, on, filter, [left, right], (source, as_of, named));
        }
        // Both sides on event time, with ON comparing their times: an interval join.
        let times = match (&left.time, &right.time) {
            (Some(lt), Some(rt)) => right
                .schema
                .iter()
                .position(|f| &f.name == rt)
                .map(|at| [lt.clone(), schema[left.schema.len() + at].name.clone()]),
            _ => None,
        };
        let filter = match times
            .as_ref()
            .map(|[l, r]| interval_join::read(filter.clone(), [l, r]))
        {
            None | Some(Timed::Regular) => filter,
            Some(Timed::Interval(bounds, rest)) => {
                return self.interval_join(kind, on, bounds, rest, [left, right], schema);
            }
            Some(Timed::Unbounded(why, help)) => {
                return Err(self
                    .err(
                        Code::UnsupportedSql,
                        format!("the join compares the two sides' event times, but {why}"),
                        &help,
                    )
                    .with_span(self.on_span()));
            }
        };
        if on.is_empty() {
            return Err(self.err(
                Code::UnsupportedSql,
                "the join's ON holds no equality between a column of each side that every pair of rows must meet (one under OR does not count); Flink runs a regular join only on equal columns".into(),
                "add an equality between the two sides, ON o.customer_id = c.customer_id; the rest of the condition may stay beside it with AND",
            )
            .with_span(self.on_span()));
        }
        self.boundedness = both_bounded(&left, &right);
        // A side that updates has each change retracted and added again (docs/joins.md,
        // "Tables that change"); an outer join deletes the padded rows it inserted. Either
        // way the joined rows have no key: an aggregate over them takes the retractions back.
        let updating = match (left.changelog.is_updating(), right.changelog.is_updating()) {
            (true, true) => Some("two sides carry"),
            (true, false) => Some("left side carries"),
            (false, true) => Some("right side carries"),
            (false, false) => None,
        };
        // An outer join of a side that updates has keys too on Flink, but Flink 2.0 and 2.2
        // write different records under them (2.0 reads the tables without the old half of
        // an update, and skips the padded row between the two): its rows are folded by an
        // aggregate, or not written at all (docs/joins.md, "Tables that change").
        // An equality between expressions of the two sides beside the key pairs is part of
        // Flink's join key (it computes the expressions below the join), which no side's key
        // then holds.
        let mut keys = match updating {
            Some(_) if kind == JoinKind::Inner && !computed_key => {
                upsert_keys(&on, &left, &right, &schema)
            }
            _ => Vec::new(),
        };
        let upsert_key = (!keys.is_empty()).then(|| keys.remove(0));
        (self.changelog, self.unkeyed) = match (upsert_key, updating) {
            (Some(key), _) => (Changelog::Upsert(key), None),
            (None, Some(side)) => {
                let why = if kind != JoinKind::Inner {
                    format!(
                        "it is a {} JOIN, under whose keys Flink 2.0 and 2.2 write different records",
                        kind.name().to_uppercase()
                    )
                } else if computed_key {
                    "its ON compares expressions of the two sides, which Flink makes part of the join key".to_string()
                } else {
                    let key: Vec<String> = on.iter().map(|(l, r)| format!("{l} = {r}")).collect();
                    format!(
                        "its rows are named only by a side's key that holds the join key ({}) while the other side has one row per join key, and neither side has such a key",
                        key.join(", ")
                    )
                };
                (Changelog::Retract, Some(Unkeyed::UpdatingJoin(side, why)))
            }
            (None, None) if kind == JoinKind::Inner => (Changelog::Append, None),
            (None, None) => (Changelog::Retract, Some(Unkeyed::OuterJoin(kind))),
        };
        self.time = None;
        self.clock = left.clock && right.clock;
        let mut keyed = KeyedState::join(kind, &on, &left.schema, &right.schema);
        // Flink keeps an updating side's rows by its key, an append side's as a multiset:
        // the state has another shape (docs/joins.md, "Tables that change").
        keyed.retracting = updating.is_some();
        let state = State::Keyed(keyed);
        let inputs = [left.current, right.current]
            .into_iter()
            .flatten()
            .collect();
        self.push_reading(Operator::Join { kind, on, filter }, schema, state, inputs);
        self.other_keys = keys;
        Ok(())
    }

    /// An interval join of two appending sides on event time (docs/joins.md, "Joins in
    /// time"): its output appends (a row is padded once, when it can match no more) and
    /// keeps a time attribute, with the watermark held back by the longer wait.
    fn interval_join(
        &mut self,
        kind: JoinKind,
        on: Vec<(String, String)>,
        bounds: streamform_ir::TimeBounds,
        filter: Option<streamform_ir::Expr>,
        [left, right]: [Stream; 2],
        schema: Vec<streamform_ir::Field>,
    ) -> Lowered<()> {
        for (side, stream) in [("left", &left), ("right", &right)] {
            if stream.changelog.is_updating() {
                return Err(self
                    .err(
                        Code::UnsupportedSql,
                        format!("the join bounds the two sides' event times, which makes it an interval join, and an interval join reads appending inputs, but its {side} side updates"),
                        "an interval join keeps each row only until the watermark passes its bounds, which a row that changes cannot be; to meet each row with the version of a table valid at its time, read the table FOR SYSTEM_TIME AS OF the row's time (a temporal join of an upsert source on event time), or join it with a regular JOIN … ON its key, without the time bounds",
                    )
                    .with_span(self.on_span()));
            }
        }
        if bounds.lower > bounds.upper {
            return Err(self
                .err(
                    Code::UnsupportedSql,
                    if bounds.lower == bounds.upper + 1 {
                        format!("the join's time condition `{bounds}` matches no pair of rows: its two strict comparisons leave no millisecond between them (a strict comparison moves its bound by 1 ms)")
                    } else {
                        format!("the join's time condition `{bounds}` matches no pair of rows: its lower bound is after its upper bound")
                    },
                    &format!(
                        "write the earlier bound first, as BETWEEN low AND high; the other way round it reads `{}`",
                        streamform_ir::TimeBounds {
                            lower: bounds.upper,
                            upper: bounds.lower,
                            ..bounds.clone()
                        }
                    ),
                )
                .with_span(self.on_span()));
        }
        self.boundedness = both_bounded(&left, &right);
        (self.changelog, self.unkeyed) = (Changelog::Append, None);
        self.time = interval_join::output_time(kind, &bounds);
        self.clock = left.clock && right.clock;
        let state = State::Keyed(KeyedState::interval_join(
            &on,
            &left.schema,
            &right.schema,
            &bounds,
        ));
        let inputs = [left.current, right.current]
            .into_iter()
            .flatten()
            .collect();
        self.push_reading(
            Operator::IntervalJoin {
                kind,
                on,
                bounds,
                filter,
            },
            schema,
            state,
            inputs,
        );
        Ok(())
    }
}

/// A join ends when both its sides do.
pub(super) fn both_bounded(left: &Stream, right: &Stream) -> Boundedness {
    if left.boundedness == Boundedness::Bounded && right.boundedness == Boundedness::Bounded {
        Boundedness::Bounded
    } else {
        Boundedness::Unbounded
    }
}

/// The keys an inner join's output is upserted by when a side updates, as Flink's planner
/// derives them (docs/joins.md, "Tables that change"): a side's key counts only when it
/// holds that side's join key columns (Flink distributes the join by them); it identifies
/// the joined rows when the other side has at most one row per join key (its key is among
/// the join key columns); both sides' keys together identify them too. The left side's key comes first, then the right's
/// (under its columns' names in the join), then both; none when no key qualifies, and the
/// rows are retracted and added again with no key.
fn upsert_keys(
    on: &[(String, String)],
    left: &Stream,
    right: &Stream,
    schema: &[streamform_ir::Field],
) -> Vec<Vec<String>> {
    // Each side's keys: its changelog's, then the others that identify its rows (those of
    // a join before this one).
    let keys_of = |s: &Stream| -> Vec<Vec<String>> {
        match &s.changelog {
            Changelog::Upsert(k) => std::iter::once(k.clone())
                .chain(s.other_keys.iter().cloned())
                .collect(),
            _ => Vec::new(),
        }
    };
    let (lks, rks) = (keys_of(left), keys_of(right));
    let joined = |side: usize, k: &[String]| {
        k.iter()
            .all(|c| on.iter().any(|(l, r)| c == if side == 0 { l } else { r }))
    };
    let holds = |side: usize, k: &[String]| {
        on.iter()
            .all(|(l, r)| k.contains(if side == 0 { l } else { r }))
    };
    let left_kept: Vec<Vec<String>> = lks.iter().filter(|k| holds(0, k)).cloned().collect();
    let right_kept: Vec<Vec<String>> = rks
        .iter()
        .filter(|k| holds(1, k))
        .filter_map(|k| {
            // A right column's name in the join's output (`customer_id0`); a key with a
            // column the side does not have names nothing.
            k.iter()
                .map(|c| {
                    let at = right.schema.iter().position(|f| &f.name == c)?;
                    Some(schema[left.schema.len() + at].name.clone())
                })
                .collect::<Option<Vec<String>>>()
        })
        .collect();
    let left_unique = lks.iter().any(|k| joined(0, k));
    let right_unique = rks.iter().any(|k| joined(1, k));
    let mut keys: Vec<Vec<String>> = Vec::new();
    let mut add = |k: Vec<String>| {
        if !keys.contains(&k) {
            keys.push(k);
        }
    };
    if right_unique {
        left_kept.iter().cloned().for_each(&mut add);
    }
    if left_unique {
        right_kept.iter().cloned().for_each(&mut add);
    }
    for l in &left_kept {
        for r in &right_kept {
            add(l.iter().chain(r).cloned().collect());
        }
    }
    keys
}
