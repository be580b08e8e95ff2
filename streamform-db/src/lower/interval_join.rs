//! An interval join: a join whose ON bounds how far apart the two sides' event times may
//! be, read as Flink's planner reads it (docs/joins.md, "Joins in time").

use streamform_ir::{BinaryOp, Expr, JoinKind, TimeBounds};

/// How far an expression moves a time: milliseconds, or why it has no fixed offset.
type Offset = Result<i64, &'static str>;

/// Which side's time attribute an expression reads, and how far it moves it: `shipped_at`
/// is (1, 0), `ordered_at + INTERVAL '4' HOUR` (0, 4h); a move by months, whose length
/// varies, or one past what a timestamp can move, has no offset.
fn time_access(e: &Expr, times: [&str; 2]) -> Option<(usize, Offset)> {
    match e {
        Expr::Column { name, .. } => times.iter().position(|t| *t == name).map(|s| (s, Ok(0))),
        Expr::PlusInterval { expr, interval } => {
            let (side, by) = time_access(expr, times)?;
            let by = by.and_then(|b| {
                if interval.months != 0 {
                    Err("months")
                } else {
                    b.checked_add(interval.millis).ok_or("overflow")
                }
            });
            Some((side, by))
        }
        _ => None,
    }
}

/// The conjuncts of a condition: `a AND b AND c` as `[a, b, c]`.
fn conjuncts(e: Expr, out: &mut Vec<Expr>) {
    match e {
        Expr::Binary {
            op: BinaryOp::And,
            left,
            right,
            ..
        } => {
            conjuncts(*left, out);
            conjuncts(*right, out);
        }
        other => out.push(other),
    }
}

/// What reading a join's condition for time bounds found.
pub(super) enum Timed {
    /// No comparison of the two sides' time attributes: a regular join.
    Regular,
    /// An interval join: its bounds, and the rest of the condition.
    Interval(TimeBounds, Option<Expr>),
    /// Comparisons of the two time attributes that do not bound the join in both
    /// directions: what is wrong, and what to write instead.
    Unbounded(String, String),
}

/// Reads the time bounds out of `filter` (the join's condition past its equal columns) as
/// Flink's planner does: each conjunct comparing the left's time attribute with the
/// right's (each side a time attribute, optionally plus or minus an INTERVAL of days or
/// less) is a time predicate; there must be one equality or two ranges, one bounding the
/// left's time from below and one from above. `times` are the two time attributes' names
/// in the join's output.
pub(super) fn read(filter: Option<Expr>, times: [&str; 2]) -> Timed {
    let mut parts = Vec::new();
    if let Some(f) = filter.clone() {
        conjuncts(f, &mut parts);
    }
    let mut lower: Vec<i64> = Vec::new();
    let mut upper: Vec<i64> = Vec::new();
    let mut equal: Vec<i64> = Vec::new();
    let mut rest: Vec<Expr> = Vec::new();
    for part in parts {
        let Expr::Binary {
            op,
            left: a,
            right: b,
            ..
        } = &part
        else {
            rest.push(part);
            continue;
        };
        let (Some((sa, oa)), Some((sb, ob))) = (time_access(a, times), time_access(b, times))
        else {
            rest.push(part);
            continue;
        };
        if sa == sb
            || !matches!(
                op,
                BinaryOp::Lt | BinaryOp::LtEq | BinaryOp::Gt | BinaryOp::GtEq | BinaryOp::Eq
            )
        {
            rest.push(part);
            continue;
        }
        let (oa, ob) = match (oa, ob) {
            (Ok(oa), Ok(ob)) => (oa, ob),
            (Err("months"), _) | (_, Err("months")) => {
                return Timed::Unbounded(
                    "it moves a time by months, whose length varies, so the join has no fixed bound".into(),
                    "write the bound in days or smaller units, which Flink turns into milliseconds: INTERVAL '30' DAY rather than INTERVAL '1' MONTH".into(),
                );
            }
            _ => {
                return Timed::Unbounded(
                    "it moves a time further than a timestamp can go".into(),
                    "keep each bound under 1000 days, as Flink's interval arithmetic needs".into(),
                );
            }
        };
        // As `left_time OP right_time + offset`, the operator turned when the right's
        // time is written first.
        let left_first = sa == 0;
        let Some(offset) = (if left_first {
            ob.checked_sub(oa)
        } else {
            oa.checked_sub(ob)
        }) else {
            rest.push(part);
            continue;
        };
        let op = match (op, left_first) {
            (op, true) => *op,
            (BinaryOp::Lt, false) => BinaryOp::Gt,
            (BinaryOp::LtEq, false) => BinaryOp::GtEq,
            (BinaryOp::Gt, false) => BinaryOp::Lt,
            (BinaryOp::GtEq, false) => BinaryOp::LtEq,
            (op, false) => *op,
        };
        match op {
            BinaryOp::Lt => upper.push(offset.saturating_sub(1)),
            BinaryOp::LtEq => upper.push(offset),
            BinaryOp::Gt => lower.push(offset.saturating_add(1)),
            BinaryOp::GtEq => lower.push(offset),
            _ => equal.push(offset),
        }
    }
    // A comparison of the two times that is no bound (under OR or NOT, or inside an
    // expression) would leave a regular join that keeps both sides for ever.
    if rest.iter().any(|part| {
        let columns = part.columns();
        times.iter().all(|t| columns.iter().any(|c| c == t))
    }) {
        return Timed::Unbounded(
            "it compares them in a way Flink does not read as bounds (under OR or NOT, or inside an expression), so the join would keep both sides for ever".into(),
            format!(
                "write the time condition as two comparisons joined by AND, or BETWEEN, each side a time column moved by an INTERVAL at most: ON … AND {r} BETWEEN {l} - INTERVAL '1' HOUR AND {l} + INTERVAL '1' HOUR",
                l = times[0],
                r = times[1]
            ),
        );
    }
    let rest = rest.into_iter().reduce(|l, r| Expr::Binary {
        op: BinaryOp::And,
        left: Box::new(l),
        right: Box::new(r),
        ty: streamform_ir::DataType::Boolean,
    });
    let bounds = |lower: i64, upper: i64| TimeBounds {
        left_time: times[0].to_string(),
        right_time: times[1].to_string(),
        lower,
        upper,
    };
    // The help names the user's own columns.
    let between = format!(
        "ON … AND {r} BETWEEN {l} - INTERVAL '1' HOUR AND {l} + INTERVAL '1' HOUR",
        l = times[0],
        r = times[1]
    );
    let one_way = |from: &str| {
        Timed::Unbounded(
            format!(
                "it bounds `{}` against `{}` only {from}, so a row would wait for ever for matches",
                times[0], times[1]
            ),
            format!(
                "bound the time from both sides to make it an interval join, which keeps each row only until the watermark passes its bounds: {between}"
            ),
        )
    };
    // Flink computes an INTERVAL of at most 999 days here (the delays of watermarks and
    // windows are held under 1000 days for the same reason).
    const LIMIT: i64 = 1000 * 86_400_000;
    if lower
        .iter()
        .chain(&upper)
        .chain(&equal)
        .any(|b| b.unsigned_abs() >= LIMIT as u64)
    {
        return Timed::Unbounded(
            "it bounds them 1000 days or more apart, more than Flink's interval arithmetic takes".into(),
            "keep each bound under 1000 days; a join of rows so far apart keeps years of rows in its state".into(),
        );
    }
    match (lower.as_slice(), upper.as_slice(), equal.as_slice()) {
        ([], [], []) => Timed::Regular,
        ([l], [u], []) => Timed::Interval(bounds(*l, *u), rest),
        ([], [], [e]) => Timed::Interval(bounds(*e, *e), rest),
        (_, _, [_, ..]) => Timed::Unbounded(
            "it compares the two times with `=` beside another comparison of them".into(),
            format!("keep either the `=` (rows of equal times meet) or two comparisons, one bound from below and one from above: {between}"),
        ),
        (l, u, []) if l.len() > 1 || u.len() > 1 => Timed::Unbounded(
            "it bounds the times more than once in one direction, which Flink does not read as an interval".into(),
            format!("write one bound from below and one from above, as BETWEEN does: {between}"),
        ),
        ([], _, []) => one_way("from above"),
        _ => one_way("from below"),
    }
}

/// The time attribute an interval join's output keeps (docs/joins.md, "Joins in time"):
/// the left's, which an inner or left join never pads; the right's for a right join; none
/// for a full join, where either may be null.
pub(super) fn output_time(kind: JoinKind, bounds: &TimeBounds) -> Option<String> {
    match kind {
        JoinKind::Inner | JoinKind::Left => Some(bounds.left_time.clone()),
        JoinKind::Right => Some(bounds.right_time.clone()),
        JoinKind::Full => None,
    }
}
