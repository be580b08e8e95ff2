//! The Streaming IR: a model is a chain of typed nodes, each with an id, an operator, an
//! output schema, boundedness, changelog mode and state requirement.
//!
//! See docs/concepts.md ("Boundedness", "Append, upsert and keys", "Keyed state") and
//! docs/plan-identity.md.

use std::fmt;

use crate::expr::Expr;
use crate::types::{DataType, MAX_DECIMAL_PRECISION};

/// One output column. Nullability is inferred by the frontend and is not part of any
/// fingerprint.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Field {
    /// Column name: a source column, an alias, or an unaliased aggregate call (`sum(amount)`).
    pub name: String,
    /// The column's type, in Streamform's own vocabulary.
    pub ty: DataType,
    /// Whether the column may hold null, as inferred by the frontend (docs/concepts.md).
    pub nullable: bool,
}

/// Whether a node's output ever ends (docs/concepts.md, "Boundedness").
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Boundedness {
    /// The output ends: downstream of a `file` source.
    Bounded,
    /// The output never ends: downstream of a `kafka` source.
    Unbounded,
}

impl Boundedness {
    /// `Bounded` / `Unbounded`, as explain prints it.
    pub fn title(self) -> &'static str {
        match self {
            Boundedness::Bounded => "Bounded",
            Boundedness::Unbounded => "Unbounded",
        }
    }
}

/// How a node's output changes over time (docs/concepts.md, "Append, upsert and keys").
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum Changelog {
    /// Every record is an insert of a new fact.
    Append,
    /// Insert, update or delete of the row with this key (possibly empty: one row).
    Upsert(Vec<String>),
    /// Delete-then-insert pairs. Nothing produces it yet.
    Retract,
}

impl Changelog {
    /// Whether the output can carry updates or deletes, i.e. the mode is not `Append`.
    pub fn is_updating(&self) -> bool {
        !matches!(self, Changelog::Append)
    }

    /// `Append`, `Upsert(customer_id)`, as explain prints it.
    pub fn title(&self) -> String {
        match self {
            Changelog::Append => "Append".into(),
            Changelog::Upsert(key) => format!("Upsert({})", key.join(", ")),
            Changelog::Retract => "Retract".into(),
        }
    }
}

/// How long a key's state is kept after its latest event time.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Retention {
    /// State is never expired; renders as `unbounded` in the state fingerprint.
    Unbounded,
    /// The model's `retention:` in milliseconds: a key's state is dropped once the
    /// watermark reaches its latest event time plus this. Renders canonically (`30d`).
    After(u64),
}

impl fmt::Display for Retention {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Retention::Unbounded => f.write_str("unbounded"),
            Retention::After(ms) => f.write_str(&crate::time::format_duration(*ms)),
        }
    }
}

/// What a source does with an event behind its watermark.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum LateEvents {
    /// Discard and count it (the default); a fixture must list it under `late:`.
    Drop,
    /// Deliver it as if it were on time.
    Keep,
}

impl LateEvents {
    /// `drop` or `keep`, as sources.yml writes it.
    pub fn name(self) -> &'static str {
        match self {
            LateEvents::Drop => "drop",
            LateEvents::Keep => "keep",
        }
    }
}

/// A source's event-time declaration: the column saying when each event happened, how
/// far out of order events may arrive, and what happens to one that arrives later.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct EventTime {
    /// The timestamp column.
    pub column: String,
    /// The watermark delay in milliseconds (bounded out-of-orderness).
    pub watermark: u64,
    /// What a late event becomes.
    pub late: LateEvents,
}

impl EventTime {
    /// `event(ordered_at) watermark=5m late=drop`, as explain prints it after `time=`.
    pub fn title(&self) -> String {
        format!(
            "event({}) watermark={} late={}",
            self.column,
            crate::time::format_duration(self.watermark),
            self.late.name()
        )
    }
}

/// One accumulator of keyed state: Streamform's name for the call and the stored type.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Accumulator {
    /// `sum(amount)`, `count(*)`.
    pub name: String,
    /// The stored type, derived from the argument's declared type by the rule in docs/sql.md.
    pub ty: DataType,
}

impl Accumulator {
    /// One accumulator per aggregate call, named and typed as the call: what an aggregate,
    /// a window and an OVER aggregation store.
    pub fn of_calls(calls: &[AggCall]) -> Vec<Accumulator> {
        calls
            .iter()
            .map(|c| Accumulator {
                name: c.name(),
                ty: c.ty,
            })
            .collect()
    }

    /// A stored row's columns, each under its own name and type: what a node that keeps
    /// rows (the last row per key, a rank's rows) stores.
    pub fn columns(schema: &[Field]) -> Vec<Accumulator> {
        schema
            .iter()
            .map(|f| Accumulator {
                name: f.name.clone(),
                ty: f.ty,
            })
            .collect()
    }
}

/// Exactly what a keyed node stores per key (docs/concepts.md, "Keyed state").
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct KeyedState {
    /// The grouping columns, in order; state is partitioned by their values.
    pub key: Vec<String>,
    /// One accumulator per aggregate call, in call order.
    pub accumulators: Vec<Accumulator>,
    /// How long a key's state is kept after its last event.
    pub retention: Retention,
    /// For a Window node, the window the state is kept per: its kind, durations and time
    /// column, part of the state fingerprint (docs/windows.md). `None` for every other node.
    pub window: Option<Window>,
    /// Whether the accumulators take changes back: an aggregate over an updating input
    /// keeps, beside each call's result, what retracting a row needs (a row count, a count
    /// of non-null values, a count per value for min and max), so its state differs from
    /// the same calls over an append input (docs/changing-tables.md).
    pub retracting: bool,
    /// For an IntervalJoin, the time condition that bounds how long each side's rows are
    /// kept (docs/joins.md, "Joins in time"), part of the state fingerprint. `None` for
    /// every other node.
    pub bounds: Option<TimeBounds>,
    /// For a Rank, its ordering, how many rows it keeps ranked and which of Flink's rank
    /// operators keeps them (docs/ranking.md), part of the state fingerprint. `None` for
    /// every other node.
    pub ranking: Option<Box<Ranking>>,
    /// For an Over node, its frame (docs/over.md), part of the state fingerprint. `None`
    /// for every other node.
    pub frame: Option<Box<OverFrame>>,
}

impl KeyedState {
    /// What a Deduplicate node stores (docs/sql.md): per key, the last row, every column of its
    /// schema under its own name and type.
    pub fn last_row(key: &[String], schema: &[Field]) -> KeyedState {
        KeyedState {
            key: key.to_vec(),
            accumulators: Accumulator::columns(schema),
            retention: Retention::Unbounded,
            window: None,
            retracting: false,
            bounds: None,
            ranking: None,
            frame: None,
        }
    }
}

/// The name of the column a window adds for its start (inclusive).
pub const WINDOW_START: &str = "window_start";
/// The name of the column a window adds for its end (exclusive).
pub const WINDOW_END: &str = "window_end";
/// The name of the column a window adds for its time: its end minus 1 ms, the time
/// attribute of a window aggregation's output.
pub const WINDOW_TIME: &str = "window_time";
/// The three columns a window adds, in the order a window table lists them.
pub const WINDOW_COLUMNS: [&str; 3] = [WINDOW_START, WINDOW_END, WINDOW_TIME];

/// Which windows an event belongs to (docs/windows.md). Durations are whole positive
/// milliseconds; windows are aligned to the epoch (no offset).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum WindowKind {
    /// One window per event: `[t - t mod size, +size)`.
    Tumble {
        /// The window's length.
        size: u64,
    },
    /// Windows of `size` starting every `slide` (`size` a multiple of `slide`): an event
    /// belongs to `size / slide` of them.
    Hop {
        /// How far apart windows start.
        slide: u64,
        /// The window's length.
        size: u64,
    },
    /// Windows that all start at the base window's start and end every `step` up to `size`
    /// (`size` a multiple of `step`).
    Cumulate {
        /// How far apart the ends are.
        step: u64,
        /// The base window's length.
        size: u64,
    },
    /// Per key, the rows no more than `gap` apart: a row at `t` opens `[t, t + gap)`, and
    /// windows of one key that meet or overlap merge into one.
    Session {
        /// How long a key may go without a row before its session closes.
        gap: u64,
    },
}

impl fmt::Display for WindowKind {
    /// `tumble(size=1m)`, `hop(slide=1m, size=5m)`, `cumulate(step=1m, size=1h)`,
    /// `session(gap=30m)`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let d = |ms: u64| crate::time::format_duration(ms);
        match *self {
            WindowKind::Tumble { size } => write!(f, "tumble(size={})", d(size)),
            WindowKind::Hop { slide, size } => {
                write!(f, "hop(slide={}, size={})", d(slide), d(size))
            }
            WindowKind::Cumulate { step, size } => {
                write!(f, "cumulate(step={}, size={})", d(step), d(size))
            }
            WindowKind::Session { gap } => write!(f, "session(gap={})", d(gap)),
        }
    }
}

/// A window over an input's event-time column.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Window {
    /// Which windows an event belongs to.
    pub kind: WindowKind,
    /// The input's event-time column (the time attribute) the windows are measured on.
    pub time: String,
}

impl fmt::Display for Window {
    /// `tumble(size=1m) on viewed_at`: the window's part of the state fingerprint.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} on {}", self.kind, self.time)
    }
}

/// A node's state requirement.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum State {
    /// Keeps nothing between records.
    Stateless,
    /// Keeps the described state per key (today only Aggregate nodes do).
    Keyed(KeyedState),
}

/// Where a source's records come from.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum Connector {
    /// Unbounded.
    Kafka {
        /// The Kafka topic read or written.
        topic: String,
    },
    /// Bounded.
    File {
        /// The file's path, as declared.
        path: String,
    },
}

impl Connector {
    /// The connector's name as written in YAML: `kafka` or `file`.
    pub fn name(&self) -> &'static str {
        match self {
            Connector::Kafka { .. } => "kafka",
            Connector::File { .. } => "file",
        }
    }

    /// The topic or path.
    pub fn location(&self) -> &str {
        match self {
            Connector::Kafka { topic } => topic,
            Connector::File { path } => path,
        }
    }

    /// The boundedness this connector gives a source: kafka is unbounded, file bounded (docs/concepts.md).
    pub fn boundedness(&self) -> Boundedness {
        match self {
            Connector::Kafka { .. } => Boundedness::Unbounded,
            Connector::File { .. } => Boundedness::Bounded,
        }
    }
}

/// An aggregate function (docs/sql.md).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum AggFunc {
    /// `sum`: int32/int64 accumulate int64, decimal(p,s) decimal(38,s), float64 float64.
    Sum,
    /// `count(*)` counts rows, `count(x)` counts non-null values; always int64.
    Count,
    /// `count(distinct x)`: the number of different non-null values; int64.
    CountDistinct,
    /// `min`: the smallest non-null value, in the argument's type.
    Min,
    /// `max`: the largest non-null value, in the argument's type.
    Max,
    /// `avg`: the sum of the non-null values divided by their count, in Flink's result
    /// type: integers stay integers (the quotient truncated toward zero), float64 stays
    /// float64, decimal(p,s) gives decimal(38, max(6, s)) rounded half away from zero.
    Avg,
    /// `LAG(x, n)` over an OVER window only (docs/over.md): the value of `x` `n` rows
    /// before, in the order rows are added to the frame (null before there are that many),
    /// in the argument's type.
    Lag(u32),
}

impl AggFunc {
    /// The SQL function's lowercase name (`sum`, `count`, `min`, `max`, `avg`; `count` for
    /// `count(distinct x)`).
    pub fn name(self) -> &'static str {
        match self {
            AggFunc::Sum => "sum",
            AggFunc::Count | AggFunc::CountDistinct => "count",
            AggFunc::Min => "min",
            AggFunc::Max => "max",
            AggFunc::Avg => "avg",
            AggFunc::Lag(_) => "lag",
        }
    }

    /// The accumulator (and result) type over an argument of type `arg` (`None` for
    /// `count(*)`), by docs/sql.md, "Aggregates": counts are int64; sum widens integers to
    /// int64 and decimals to precision 38 with their scale, and keeps float64; min and max
    /// keep their argument's type, boolean excepted; avg follows Flink (integers and
    /// float64 keep their type, decimal(p,s) gives decimal(38, max(6, s))). `None` where
    /// the call is not defined.
    pub fn accumulator_type(self, arg: Option<DataType>) -> Option<DataType> {
        use DataType::*;
        match (self, arg) {
            (AggFunc::Count, _) => Some(Int64),
            (_, None) => None,
            (AggFunc::Lag(_), Some(t)) => Some(t),
            (AggFunc::CountDistinct, Some(_)) => Some(Int64),
            (AggFunc::Sum, Some(Int32 | Int64)) => Some(Int64),
            (AggFunc::Sum, Some(Decimal { scale, .. })) => Some(Decimal {
                precision: MAX_DECIMAL_PRECISION,
                scale,
            }),
            (AggFunc::Sum | AggFunc::Avg, Some(Float64)) => Some(Float64),
            (AggFunc::Avg, Some(t @ (Int32 | Int64))) => Some(t),
            (AggFunc::Avg, Some(Decimal { scale, .. })) => Some(Decimal {
                precision: MAX_DECIMAL_PRECISION,
                scale: scale.max(6),
            }),
            (AggFunc::Sum | AggFunc::Avg, Some(_)) => None,
            (AggFunc::Min | AggFunc::Max, Some(Boolean)) => None,
            (AggFunc::Min | AggFunc::Max, Some(t)) => Some(t),
        }
    }

    /// The call's name: `sum(amount)`, `count(*)`, `count(distinct customer_id)`.
    pub fn call_name(self, arg: Option<&str>) -> String {
        let arg = arg.unwrap_or("*");
        match self {
            AggFunc::CountDistinct => format!("count(distinct {arg})"),
            AggFunc::Lag(n) if n != 1 => format!("lag({arg}, {n})"),
            _ => format!("{}({arg})", self.name()),
        }
    }
}

/// One aggregate call: `sum(amount)`, `count(*)` (`arg: None`).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct AggCall {
    /// Which aggregate function is called.
    pub func: AggFunc,
    /// The input column; `None` for `count(*)`.
    pub arg: Option<String>,
    /// The accumulator (and output) type, by the rule in docs/sql.md.
    pub ty: DataType,
}

impl AggCall {
    /// Streamform's name for the call, used for the accumulator and the output column.
    pub fn name(&self) -> String {
        self.func.call_name(self.arg.as_deref())
    }
}

/// One output column of a projection.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct ProjectItem {
    /// The expression computing the column's value.
    pub expr: Expr,
    /// The output column name.
    pub name: String,
}

impl ProjectItem {
    /// The item passing `field` on as it is.
    pub fn column(field: &Field) -> ProjectItem {
        ProjectItem {
            expr: Expr::Column {
                name: field.name.clone(),
                ty: field.ty,
            },
            name: field.name.clone(),
        }
    }
}

impl fmt::Display for ProjectItem {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let e = self.expr.to_string();
        if e == self.name {
            f.write_str(&e)
        } else {
            write!(f, "{e} AS {}", self.name)
        }
    }
}

/// One sort key of ORDER BY.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct SortKey {
    /// The column sorted on.
    pub column: String,
    /// `true` for `DESC`, `false` for `ASC`.
    pub descending: bool,
}

impl fmt::Display for SortKey {
    /// `revenue desc`, `ordered_at asc`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let dir = if self.descending { "desc" } else { "asc" };
        write!(f, "{} {dir}", self.column)
    }
}

/// Which of Flink's rank operators a Rank is (docs/ranking.md, "Which rows are kept"):
/// Flink picks one by whether the input updates, and the simulator follows the one picked.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum RankStrategy {
    /// Over an append input: only the rows that can still rank are kept, and a row pushed
    /// out of the top is forgotten.
    Append,
    /// Over an updating input: every input row is kept, so that a row leaving the top can
    /// be replaced by the next one.
    Retract,
    /// A top of one ordered by the time attribute alone, without the row number: Flink's
    /// deduplication, one row kept per partition. Descending, the row with the latest time
    /// so far (a later or equal time replaces it, as an update); ascending, the row with
    /// the earliest time, inserted once the watermark passes it (rows behind the watermark
    /// are dropped as late).
    Deduplicate,
    /// A rank per window (PARTITION BY both of a window's bounds, over an append input):
    /// Flink's window Top-N, which keeps each window's rows until the watermark reaches
    /// its end minus 1 ms, then inserts its top rows once, in rank order.
    Window,
    /// A top of one per window ordered by the time attribute alone, without the row
    /// number, over a window table: Flink's window deduplication, one row kept per
    /// partition and window and inserted when the window fires. Ascending, the row with the
    /// earliest time (the first to arrive among equal times); descending, the latest (the
    /// last to arrive among equal times).
    WindowDeduplicate,
}

impl RankStrategy {
    /// `append` or `retract`, as the state fingerprint writes it.
    pub fn name(self) -> &'static str {
        match self {
            RankStrategy::Append => "append",
            RankStrategy::Retract => "retract",
            RankStrategy::Deduplicate => "deduplicate",
            RankStrategy::Window => "window",
            RankStrategy::WindowDeduplicate => "window_deduplicate",
        }
    }

    /// Whether the rank is per window, final when its window fires.
    pub fn per_window(self) -> bool {
        matches!(self, RankStrategy::Window | RankStrategy::WindowDeduplicate)
    }
}

/// What a Rank ranks by and how many rows it keeps ranked (docs/ranking.md).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Ranking {
    /// The ORDER BY of `ROW_NUMBER() OVER`, most significant first; rows that tie keep
    /// their arrival order.
    pub order: Vec<SortKey>,
    /// The greatest row number kept (`rn <= 3` is 3, `rn = 1` is 1).
    pub top: u64,
    /// Which rank operator keeps the rows.
    pub strategy: RankStrategy,
    /// For a window Top-N, the partition column holding the window's end (`window_end`,
    /// under its name here), which says when the window is final; `None` otherwise.
    pub window_end: Option<String>,
}

impl fmt::Display for Ranking {
    /// `order=[revenue desc] top=3 strategy=retract`: the ranking's part of the state
    /// fingerprint.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let order: Vec<String> = self.order.iter().map(ToString::to_string).collect();
        write!(
            f,
            "order=[{}] top={} strategy={}",
            order.join(", "),
            self.top,
            self.strategy.name()
        )
    }
}

/// How an OVER aggregation's frame is measured (docs/over.md): in rows, or in time.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum FrameUnit {
    /// `ROWS`: each row is aggregated with the rows before it, one by one; rows of equal
    /// time each get their own result, in arrival order.
    Rows,
    /// `RANGE`: each row is aggregated with every row whose time is within the frame of
    /// its own, rows of equal time (its peers) included, so peers share one result.
    Range,
}

/// The frame of an OVER aggregation (docs/over.md): ordered by the time attribute, from a
/// bound before the current row up to it.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct OverFrame {
    /// The time attribute the rows are ordered by, ascending.
    pub time: String,
    /// Rows or time.
    pub unit: FrameUnit,
    /// How far back the frame reaches: `None` for every earlier row (UNBOUNDED
    /// PRECEDING), otherwise a number of rows (ROWS) or of milliseconds (RANGE).
    pub preceding: Option<u64>,
}

impl OverFrame {
    /// Whether rows leave the frame, so its accumulators take rows back.
    pub fn bounded(&self) -> bool {
        self.preceding.is_some()
    }
}

impl fmt::Display for OverFrame {
    /// `range unbounded preceding on ordered_at`, `rows 2 preceding on ordered_at`,
    /// `range 1h preceding on ordered_at`: the frame's part of the state fingerprint.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let unit = match self.unit {
            FrameUnit::Rows => "rows",
            FrameUnit::Range => "range",
        };
        match (self.preceding, self.unit) {
            (None, _) => write!(f, "{unit} unbounded preceding on {}", self.time),
            (Some(n), FrameUnit::Rows) => write!(f, "{unit} {n} preceding on {}", self.time),
            (Some(ms), FrameUnit::Range) => write!(
                f,
                "{unit} {} preceding on {}",
                crate::time::format_duration(ms),
                self.time
            ),
        }
    }
}

/// The declared materialization of a model.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum Materialized {
    /// `materialized: append` (the default): every record is a new fact, with no key.
    Append,
    /// `materialized: upsert`: records insert, update or delete the row identified by `key`.
    Upsert {
        /// The declared `key:` columns; empty for a global aggregate.
        key: Vec<String>,
    },
}

impl Materialized {
    /// `append` or `upsert`, as written in streamform.yml.
    pub fn name(&self) -> &'static str {
        match self {
            Materialized::Append => "append",
            Materialized::Upsert { .. } => "upsert",
        }
    }

    /// `append` or `upsert(customer_id)`, for display (a key column as written in
    /// streamform.yml may hold anything, so control characters are escaped).
    pub fn summary(&self) -> String {
        match self {
            Materialized::Append => "append".into(),
            Materialized::Upsert { key } => {
                let key: Vec<_> = key.iter().map(|k| crate::printable(k)).collect();
                format!("upsert({})", key.join(", "))
            }
        }
    }
}

/// An external destination declared by a model's `sink:` block.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct SinkTarget {
    /// Where the records go: a Kafka topic or a file path.
    pub connector: Connector,
    /// The serialization format, `json` or `csv`.
    pub format: String,
}

/// What a node does.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum Operator {
    /// Reads a declared source; the first node of a chain that reads `source('name')`.
    Source {
        /// The source's name in sources.yml.
        name: String,
        /// Where the source's records come from.
        connector: Connector,
        /// The source's format, `json` or `csv`.
        format: String,
        /// Its event-time declaration; `None` for a source on processing time.
        event_time: Option<EventTime>,
    },
    /// Passes on the rows for which the predicate is true (WHERE, HAVING); stateless.
    Filter {
        /// A boolean expression over the input columns.
        predicate: Expr,
    },
    /// Computes the output columns of the SELECT list; stateless.
    Project {
        /// One item per output column, in output order.
        items: Vec<ProjectItem>,
    },
    /// GROUP BY with aggregate calls: keyed state, output upserted by the grouping columns.
    Aggregate {
        /// The grouping columns, in order; empty for a global aggregate.
        group_by: Vec<String>,
        /// The aggregate calls; each is one accumulator and one output column after the key.
        calls: Vec<AggCall>,
    },
    /// Keeps the last row per key of an append input (docs/sql.md): the node an upsert model over
    /// an append input needs, with the last row of each key as its keyed state. Emits an
    /// insert for a key's first row and an update (before = the row it replaces) after.
    Deduplicate {
        /// The model's key, in order.
        key: Vec<String>,
    },
    /// A window aggregation (docs/windows.md): the input's rows grouped by window and key,
    /// one insert per (key, window) holding a row when the watermark reaches the window's
    /// end minus 1 ms. Its output is append, and its state is freed when a window fires.
    Window {
        /// The windows and the time column they are measured on.
        window: Window,
        /// The grouping columns in GROUP BY order: input columns and the window's own
        /// (`window_start`, `window_end`, both always, and `window_time` optionally). The
        /// input has no column of those names.
        group_by: Vec<String>,
        /// The aggregate calls; each is one accumulator and one output column after the key.
        calls: Vec<AggCall>,
    },
    /// A regular join of its two inputs (left, then right) on equal columns, with an
    /// optional further condition (docs/joins.md): both sides kept, keyed by the join key;
    /// each change of one side is matched against the other side's rows. Its schema is the
    /// left input's columns, then the right's, a right column named like an earlier column
    /// renamed as Flink's planner does (`customer_id0`).
    Join {
        /// Which unmatched rows are kept, padded with nulls.
        kind: JoinKind,
        /// The equal columns: (left input's column, right input's column), in ON's order.
        on: Vec<(String, String)>,
        /// The rest of ON, over the join's output columns; `None` when ON is only equalities.
        filter: Option<Expr>,
    },
    /// An interval join of its two inputs (left, then right), both append and on event
    /// time (docs/joins.md, "Joins in time"): equal columns as a regular join's, and a
    /// time condition that bounds how far apart the two rows' times may be. Each side's rows
    /// are kept until the watermark passes the last time the other side could match them;
    /// an unmatched row of a side that keeps them is then inserted padded. Its output
    /// appends, and its schema is the regular join's.
    IntervalJoin {
        /// Which unmatched rows are kept, padded with nulls once they can match no more.
        kind: JoinKind,
        /// The equal columns: (left input's column, right input's column), in ON's order;
        /// empty when ON compares only times.
        on: Vec<(String, String)>,
        /// The time condition.
        bounds: TimeBounds,
        /// The rest of ON, over the join's output columns; `None` when there is none.
        filter: Option<Expr>,
    },
    /// An event-time temporal join (docs/joins.md, "Joins in time"): each row of its left
    /// input (the probe side, appending) joined with the version of its right input (an
    /// upsert source read as a versioned table) valid at the probe row's time. A probe row
    /// waits until the watermark passes its time; then it meets the latest version of its
    /// key at or before that time, or none (padded with nulls in a LEFT join). Its output
    /// appends, in the probe rows' arrival order, and keeps the probe side's time.
    TemporalJoin {
        /// `Inner` or `Left`.
        kind: JoinKind,
        /// The equal columns: (left input's column, right input's column), in ON's order; the
        /// right ones are the versioned table's key.
        on: Vec<(String, String)>,
        /// The probe side's time attribute (`AS OF` it), by its name in the join's output.
        left_time: String,
        /// The versioned side's time attribute, by its name in the join's output.
        right_time: String,
    },
    /// A window table read by the rank after it (docs/ranking.md, "A top per window"): each
    /// row of its append input is passed on once for every window it belongs to (one for a
    /// TUMBLE, several for a HOP or a CUMULATE) with the window's `window_start`,
    /// `window_end` and `window_time` after its columns; a row without a time is dropped.
    /// Stateless; its time attribute is `window_time`.
    WindowTable {
        /// The windows and the time column they are measured on.
        window: Window,
    },
    /// `ROW_NUMBER() OVER (PARTITION BY … ORDER BY …)` filtered to the first rows
    /// (docs/ranking.md): per partition, the `top` rows first by the ordering, as Flink's
    /// rank operators keep and emit them. Its schema is the input's columns, then the row
    /// number when the model reads it.
    Rank {
        /// The PARTITION BY columns, in order; empty for one ranking of every row.
        partition_by: Vec<String>,
        /// The ordering, how many rows are kept ranked, and how.
        ranking: Ranking,
        /// The row number's column, when the model reads it: each row is then emitted with
        /// its position, and a row that moves is updated at each position it leaves and
        /// takes (Flink's rank number output).
        number: Option<String>,
    },
    /// An OVER aggregation (docs/over.md): each row of its append input, once the
    /// watermark passes its time, emitted with the calls' results over its frame (the rows
    /// of its partition before it, up to the frame's bound, and itself). Its schema is the
    /// input's columns, then one per call; it appends and keeps the input's time attribute.
    Over {
        /// The PARTITION BY columns, in order; empty for one frame over every row.
        partition_by: Vec<String>,
        /// The ordering and the frame.
        frame: OverFrame,
        /// The aggregate calls; each is one accumulator and one output column after the
        /// input's columns.
        calls: Vec<AggCall>,
    },
    /// UNION ALL: passes on every change of each of its inputs (two or more, with the same
    /// column types; its schema takes the first input's names), stateless (docs/sql.md,
    /// "Several inputs").
    Union,
    /// ORDER BY over a bounded input: emits the sorted rows when the input ends (docs/concepts.md).
    Sort {
        /// The ORDER BY keys, most significant first.
        keys: Vec<SortKey>,
    },
    /// The last node of every model: its declared materialization and optional destination.
    Sink {
        /// The model this Sink ends.
        model: String,
        /// The model's declared materialization.
        materialized: Materialized,
        /// The model's `sink:` destination; `None` when it declares none.
        target: Option<SinkTarget>,
    },
}

/// Which rows of a regular join without a match are kept (padded with nulls).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum JoinKind {
    /// Only matched rows.
    Inner,
    /// Every left row, padded while it has no match.
    Left,
    /// Every right row, padded while it has no match.
    Right,
    /// Every row of both sides, padded while it has no match.
    Full,
}

impl JoinKind {
    /// `inner`, `left`, `right` or `full`, as definitions and explain write it.
    pub fn name(self) -> &'static str {
        match self {
            JoinKind::Inner => "inner",
            JoinKind::Left => "left",
            JoinKind::Right => "right",
            JoinKind::Full => "full",
        }
    }

    /// Whether the left side keeps its unmatched rows.
    pub fn left_outer(self) -> bool {
        matches!(self, JoinKind::Left | JoinKind::Full)
    }

    /// Whether the right side keeps its unmatched rows.
    pub fn right_outer(self) -> bool {
        matches!(self, JoinKind::Right | JoinKind::Full)
    }
}

/// The name of the accumulator counting a stored outer row's matches (Flink keeps it to
/// know when to pad the row again).
pub const JOIN_MATCHES: &str = "matches";

impl KeyedState {
    /// What a Join stores (docs/joins.md): per join key (written `left=right` column pairs),
    /// each side's rows, their columns named `left.<column>` and `right.<column>`, and for a
    /// side that keeps unmatched rows, each row's count of matches (`left.matches`).
    pub fn join(
        kind: JoinKind,
        on: &[(String, String)],
        left: &[Field],
        right: &[Field],
    ) -> KeyedState {
        let side = |name: &str, fields: &[Field], outer: bool| {
            let mut accs: Vec<Accumulator> = fields
                .iter()
                .map(|f| Accumulator {
                    name: format!("{name}.{}", f.name),
                    ty: f.ty,
                })
                .collect();
            if outer {
                accs.push(Accumulator {
                    name: format!("{name}.{JOIN_MATCHES}"),
                    ty: DataType::Int64,
                });
            }
            accs
        };
        let mut accumulators = side("left", left, kind.left_outer());
        accumulators.extend(side("right", right, kind.right_outer()));
        KeyedState {
            key: on.iter().map(|(l, r)| format!("{l}={r}")).collect(),
            accumulators,
            retention: Retention::Unbounded,
            window: None,
            retracting: false,
            bounds: None,
            ranking: None,
            frame: None,
        }
    }

    /// What an IntervalJoin stores (docs/joins.md, "Joins in time"): per join key, each
    /// side's rows by their time, each with whether it matched a row yet (`left.matched`),
    /// until the watermark passes the last time a row of the other side could match it.
    pub fn interval_join(
        on: &[(String, String)],
        left: &[Field],
        right: &[Field],
        bounds: &TimeBounds,
    ) -> KeyedState {
        let side = |name: &str, fields: &[Field]| {
            fields
                .iter()
                .map(|f| Accumulator {
                    name: format!("{name}.{}", f.name),
                    ty: f.ty,
                })
                .chain(std::iter::once(Accumulator {
                    name: format!("{name}.{JOIN_MATCHED}"),
                    ty: DataType::Boolean,
                }))
                .collect::<Vec<_>>()
        };
        let mut accumulators = side("left", left);
        accumulators.extend(side("right", right));
        KeyedState {
            key: on.iter().map(|(l, r)| format!("{l}={r}")).collect(),
            accumulators,
            retention: Retention::Unbounded,
            window: None,
            retracting: false,
            bounds: Some(bounds.clone()),
            ranking: None,
            frame: None,
        }
    }
}

impl KeyedState {
    /// What a TemporalJoin stores (docs/joins.md, "Joins in time"): per join key (the
    /// versioned table's key), the probe rows waiting for the watermark (`left.…`) and the
    /// versions by their time (`right.…`).
    pub fn temporal_join(on: &[(String, String)], left: &[Field], right: &[Field]) -> KeyedState {
        let side = |name: &str, fields: &[Field]| {
            fields
                .iter()
                .map(|f| Accumulator {
                    name: format!("{name}.{}", f.name),
                    ty: f.ty,
                })
                .collect::<Vec<_>>()
        };
        let mut accumulators = side("left", left);
        accumulators.extend(side("right", right));
        KeyedState {
            key: on.iter().map(|(l, r)| format!("{l}={r}")).collect(),
            accumulators,
            retention: Retention::Unbounded,
            window: None,
            retracting: false,
            bounds: None,
            ranking: None,
            frame: None,
        }
    }
}

impl KeyedState {
    /// What an Over node stores (docs/over.md): per partition, the calls' accumulators; the
    /// rows waiting for the watermark and, for a bounded frame, the rows still in it are
    /// kept beside them. A bounded frame's accumulators take rows back (`retracting`).
    pub fn over(partition_by: &[String], frame: &OverFrame, calls: &[AggCall]) -> KeyedState {
        KeyedState {
            key: partition_by.to_vec(),
            accumulators: Accumulator::of_calls(calls),
            retention: Retention::Unbounded,
            window: None,
            retracting: frame.bounded(),
            bounds: None,
            ranking: None,
            frame: Some(Box::new(frame.clone())),
        }
    }
}

impl KeyedState {
    /// What a Rank stores (docs/ranking.md): per partition, the rows it keeps ranked,
    /// every column of its input under its own name and type. Over an updating input it
    /// keeps every row, and so takes rows back (`retracting`).
    pub fn rank(partition_by: &[String], ranking: &Ranking, input: &[Field]) -> KeyedState {
        KeyedState {
            key: partition_by.to_vec(),
            accumulators: Accumulator::columns(input),
            retention: Retention::Unbounded,
            window: None,
            retracting: ranking.strategy == RankStrategy::Retract,
            bounds: None,
            ranking: Some(Box::new(ranking.clone())),
            frame: None,
        }
    }
}

/// The name of the flag an interval join keeps beside each stored row: whether it matched
/// a row of the other side (a row that never did is padded when it expires, on a side that
/// keeps its unmatched rows).
pub const JOIN_MATCHED: &str = "matched";

/// The time condition of an interval join (docs/joins.md, "Joins in time"): a left row and
/// a right row match when `right_time + lower <= left_time <= right_time + upper`, in
/// milliseconds, the form Flink reads every such condition into (a strict comparison moves
/// its bound by 1 ms).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct TimeBounds {
    /// The left input's time attribute, by its name in the join's output.
    pub left_time: String,
    /// The right input's time attribute, by its name in the join's output (`ts0` where the
    /// left has a `ts`).
    pub right_time: String,
    /// The least `left_time - right_time` that matches.
    pub lower: i64,
    /// The greatest `left_time - right_time` that matches.
    pub upper: i64,
}

impl TimeBounds {
    /// How long after its own time a left row may still meet a match: a right row up to
    /// its time minus `lower` (Flink's left relative size).
    pub fn left_wait(&self) -> i64 {
        self.lower.saturating_neg()
    }

    /// How long after its own time a right row may still meet a match: a left row up to
    /// its time plus `upper` (Flink's right relative size).
    pub fn right_wait(&self) -> i64 {
        self.upper
    }

    /// How far the join holds back the watermark it passes on: the longer of the two
    /// waits, so that no row it emits is behind the watermark after it.
    pub fn delay(&self) -> i64 {
        self.left_wait().max(self.right_wait()).max(0)
    }
}

impl fmt::Display for TimeBounds {
    /// `ordered_at between shipped_at - 4h and shipped_at`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let at = |ms: i64| match ms {
            0 => self.right_time.clone(),
            ms if ms < 0 => format!(
                "{} - {}",
                self.right_time,
                crate::time::format_duration(ms.unsigned_abs())
            ),
            ms => format!(
                "{} + {}",
                self.right_time,
                crate::time::format_duration(ms.unsigned_abs())
            ),
        };
        write!(
            f,
            "{} between {} and {}",
            self.left_time,
            at(self.lower),
            at(self.upper)
        )
    }
}

/// The output columns of a join: the left's, then the right's, a right column whose name an
/// earlier column has renamed with the first free numeric suffix, as Flink's planner names
/// them (`customer_id0`); nullable on a side that is padded.
pub fn join_schema(kind: JoinKind, left: &[Field], right: &[Field]) -> Vec<Field> {
    let mut out: Vec<Field> = left
        .iter()
        .map(|f| Field {
            nullable: f.nullable || kind.right_outer(),
            ..f.clone()
        })
        .collect();
    for f in right {
        let mut name = f.name.clone();
        let mut n = 0;
        while out.iter().any(|o| o.name == name) {
            name = format!("{}{n}", f.name);
            n += 1;
        }
        out.push(Field {
            name,
            ty: f.ty,
            nullable: f.nullable || kind.left_outer(),
        });
    }
    out
}

/// The kind part of a node id.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum NodeKind {
    /// A [`Operator::Source`]; `source` in ids.
    Source,
    /// A [`Operator::Filter`]; `filter` in ids.
    Filter,
    /// A [`Operator::Project`]; `project` in ids.
    Project,
    /// An [`Operator::Aggregate`]; `aggregate` in ids.
    Aggregate,
    /// A [`Operator::Sort`]; `sort` in ids.
    Sort,
    /// A [`Operator::Sink`]; `sink` in ids.
    Sink,
    /// A [`Operator::Deduplicate`]; `deduplicate` in ids.
    Deduplicate,
    /// A [`Operator::Window`]; `window` in ids.
    Window,
    /// A [`Operator::WindowTable`]; `window_table` in ids.
    WindowTable,
    /// An [`Operator::Union`]; `union` in ids.
    Union,
    /// An [`Operator::Join`]; `join` in ids.
    Join,
    /// An [`Operator::IntervalJoin`]; `interval_join` in ids.
    IntervalJoin,
    /// An [`Operator::TemporalJoin`]; `temporal_join` in ids.
    TemporalJoin,
    /// An [`Operator::Rank`]; `rank` in ids.
    Rank,
    /// An [`Operator::Over`]; `over` in ids.
    Over,
}

impl NodeKind {
    /// Every kind, in the order ids list them.
    pub const ALL: [NodeKind; 15] = [
        NodeKind::Source,
        NodeKind::Filter,
        NodeKind::Project,
        NodeKind::Union,
        NodeKind::Join,
        NodeKind::IntervalJoin,
        NodeKind::TemporalJoin,
        NodeKind::Aggregate,
        NodeKind::Window,
        NodeKind::WindowTable,
        NodeKind::Deduplicate,
        NodeKind::Rank,
        NodeKind::Over,
        NodeKind::Sort,
        NodeKind::Sink,
    ];

    /// The kind an id names; the inverse of [`NodeKind::id_name`].
    pub fn from_id_name(name: &str) -> Option<NodeKind> {
        NodeKind::ALL.into_iter().find(|k| k.id_name() == name)
    }

    /// `source`, `aggregate`, ... as node ids write it.
    pub fn id_name(self) -> &'static str {
        match self {
            NodeKind::Source => "source",
            NodeKind::Filter => "filter",
            NodeKind::Project => "project",
            NodeKind::Aggregate => "aggregate",
            NodeKind::Sort => "sort",
            NodeKind::Sink => "sink",
            NodeKind::Deduplicate => "deduplicate",
            NodeKind::Window => "window",
            NodeKind::WindowTable => "window_table",
            NodeKind::Union => "union",
            NodeKind::Join => "join",
            NodeKind::IntervalJoin => "interval_join",
            NodeKind::TemporalJoin => "temporal_join",
            NodeKind::Rank => "rank",
            NodeKind::Over => "over",
        }
    }

    /// `Source`, `Aggregate`, ... as explain prints it.
    pub fn title(self) -> &'static str {
        match self {
            NodeKind::Source => "Source",
            NodeKind::Filter => "Filter",
            NodeKind::Project => "Project",
            NodeKind::Aggregate => "Aggregate",
            NodeKind::Sort => "Sort",
            NodeKind::Sink => "Sink",
            NodeKind::Deduplicate => "Deduplicate",
            NodeKind::Window => "Window",
            NodeKind::WindowTable => "WindowTable",
            NodeKind::Union => "Union",
            NodeKind::Join => "Join",
            NodeKind::IntervalJoin => "IntervalJoin",
            NodeKind::TemporalJoin => "TemporalJoin",
            NodeKind::Rank => "Rank",
            NodeKind::Over => "Over",
        }
    }
}

impl Operator {
    /// The node kind of this operator, as used in its id.
    pub fn kind(&self) -> NodeKind {
        match self {
            Operator::Source { .. } => NodeKind::Source,
            Operator::Filter { .. } => NodeKind::Filter,
            Operator::Project { .. } => NodeKind::Project,
            Operator::Aggregate { .. } => NodeKind::Aggregate,
            Operator::Sort { .. } => NodeKind::Sort,
            Operator::Deduplicate { .. } => NodeKind::Deduplicate,
            Operator::Window { .. } => NodeKind::Window,
            Operator::WindowTable { .. } => NodeKind::WindowTable,
            Operator::Union => NodeKind::Union,
            Operator::Join { .. } => NodeKind::Join,
            Operator::IntervalJoin { .. } => NodeKind::IntervalJoin,
            Operator::TemporalJoin { .. } => NodeKind::TemporalJoin,
            Operator::Rank { .. } => NodeKind::Rank,
            Operator::Over { .. } => NodeKind::Over,
            Operator::Sink { .. } => NodeKind::Sink,
        }
    }
}

/// A stable node id, `<model>::<kind>::<ordinal>` (docs/plan-identity.md, "Node ids").
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct NodeId {
    /// The model the node belongs to.
    pub model: String,
    /// The operator kind.
    pub kind: NodeKind,
    /// Counts operators of this kind within the model, in plan order.
    pub ordinal: u32,
}

impl NodeId {
    /// Reads `<model>::<kind>::<ordinal>`, the inverse of its rendering: a model with no
    /// `::`, a kind's id name, an ordinal written without a leading zero.
    pub fn parse(id: &str) -> Option<NodeId> {
        let mut parts = id.split("::");
        let (Some(model), Some(kind), Some(ordinal), None) =
            (parts.next(), parts.next(), parts.next(), parts.next())
        else {
            return None;
        };
        let ordinal = ordinal
            .parse::<u32>()
            .ok()
            .filter(|o| o.to_string() == ordinal)?;
        (!model.is_empty()).then_some(())?;
        Some(NodeId {
            model: model.to_string(),
            kind: NodeKind::from_id_name(kind)?,
            ordinal,
        })
    }
}

impl fmt::Display for NodeId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{}::{}::{}",
            self.model,
            self.kind.id_name(),
            self.ordinal
        )
    }
}

/// One node of a model's chain.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Node {
    /// The node's stable, positional id.
    pub id: NodeId,
    /// What the node does.
    pub op: Operator,
    /// The nodes it reads, in order: earlier nodes of its model, or the Sink of a model it
    /// reads through `ref()`; none for a Source. A Union reads two or more, every other node
    /// but a Source exactly one: a model's nodes form a graph in topological order.
    pub inputs: Vec<NodeId>,
    /// The output columns, in order.
    pub schema: Vec<Field>,
    /// Whether the output ends; carried forward from the source.
    pub boundedness: Boundedness,
    /// How the output changes over time.
    pub changelog: Changelog,
    /// What the node keeps between records.
    pub state: State,
    /// The event-time column the output carries (its time attribute), under its name at
    /// this node; `None` on processing time or once the column is gone.
    pub time: Option<String>,
}

/// A relation a model reads.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Input {
    /// `source('name')`: read through a Source node of the model.
    Source(String),
    /// `ref('name')`: an operator of the model reads that model's Sink.
    Model(String),
}

impl Input {
    /// The source's or the model's name.
    pub fn name(&self) -> &str {
        match self {
            Input::Source(n) | Input::Model(n) => n,
        }
    }
}

/// One model's lowered plan: its nodes from first operator to Sink.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct ModelPlan {
    /// The model's name: its file's stem.
    pub name: String,
    /// The relations the model reads, each once, in the order its SQL first names them.
    pub inputs: Vec<Input>,
    /// The nodes in topological order (each after the nodes it reads); never empty, and the
    /// last one is the Sink.
    pub nodes: Vec<Node>,
}

impl ModelPlan {
    /// The models this one reads through `ref()`, in order.
    pub fn models_read(&self) -> impl Iterator<Item = &str> {
        self.inputs.iter().filter_map(|i| match i {
            Input::Model(m) => Some(m.as_str()),
            Input::Source(_) => None,
        })
    }

    /// The Sink, whose schema and changelog are the model's contract with readers.
    pub fn sink(&self) -> &Node {
        self.nodes
            .last()
            .expect("a model plan always ends in a Sink")
    }

    /// The model's declared materialization, as recorded on its Sink.
    pub fn materialized(&self) -> &Materialized {
        match &self.sink().op {
            Operator::Sink { materialized, .. } => materialized,
            _ => unreachable!("the last node of a model plan is a Sink"),
        }
    }
}

/// Assigns positional ids to a chain of operators: the ordinal counts earlier operators of
/// the same kind within the model.
pub fn assign_id(model: &str, earlier: &[Node], kind: NodeKind) -> NodeId {
    let ordinal = earlier.iter().filter(|n| n.id.kind == kind).count() as u32;
    NodeId {
        model: model.to_string(),
        kind,
        ordinal,
    }
}

/// Whether any source or sink of the plans uses Kafka, so a backend needs to know where
/// Kafka is (a target's Kafka settings) to run the application.
pub fn uses_kafka(plans: &[ModelPlan]) -> bool {
    plans.iter().flat_map(|p| &p.nodes).any(|n| match &n.op {
        Operator::Source { connector, .. } => matches!(connector, Connector::Kafka { .. }),
        Operator::Sink {
            target: Some(SinkTarget { connector, .. }),
            ..
        } => matches!(connector, Connector::Kafka { .. }),
        _ => false,
    })
}

/// The columns holding the window's bounds (`window_start`, `window_end`, under the names
/// they have there) in the output of node `id` of `nodes` (a model's nodes, in order): set
/// by a window aggregation, carried by a filter and through a projection that selects both
/// as they are, and by a node reading another model's Sink, from `of_model` (that model's
/// bounds); `None` past any other node. Flink tracks the same columns (its window
/// properties), and ranks per window when a rank partitions by both (docs/ranking.md).
pub fn window_bounds(
    nodes: &[Node],
    id: &NodeId,
    of_model: &dyn Fn(&str) -> Option<(String, String)>,
) -> Option<(String, String)> {
    let node = nodes.iter().find(|n| &n.id == id)?;
    let input = || {
        let read = node.inputs.first()?;
        if read.model == id.model {
            window_bounds(nodes, read, of_model)
        } else {
            of_model(&read.model)
        }
    };
    match &node.op {
        Operator::Window { .. } | Operator::WindowTable { .. } => {
            Some((WINDOW_START.to_string(), WINDOW_END.to_string()))
        }
        Operator::Filter { .. } | Operator::Sink { .. } => input(),
        Operator::Project { items } => {
            let (start, end) = input()?;
            let renamed = |column: &str| {
                items.iter().find_map(|i| match &i.expr {
                    Expr::Column { name, .. } if name == column => Some(i.name.clone()),
                    _ => None,
                })
            };
            Some((renamed(&start)?, renamed(&end)?))
        }
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_node_id_reads_back_what_it_renders_and_nothing_else() {
        for kind in NodeKind::ALL {
            let id = NodeId {
                model: "customer_metrics".into(),
                kind,
                ordinal: 12,
            };
            assert_eq!(NodeId::parse(&id.to_string()), Some(id));
        }
        for bad in [
            "",
            "m::filter",
            "m::filter::01",
            "m::filter::-1",
            "m::windows::0",
            "::filter::0",
            "m::filter::0::1",
        ] {
            assert_eq!(NodeId::parse(bad), None, "{bad}");
        }
    }

    #[test]
    fn the_accumulator_types_follow_d4_and_names_read_back() {
        use DataType::*;
        let dec = Decimal {
            precision: 10,
            scale: 2,
        };
        for (func, arg, want) in [
            (AggFunc::Count, None, Some(Int64)),
            (AggFunc::Count, Some(String), Some(Int64)),
            (AggFunc::Sum, Some(Int32), Some(Int64)),
            (AggFunc::Sum, Some(Int64), Some(Int64)),
            (
                AggFunc::Sum,
                Some(dec),
                Some(Decimal {
                    precision: 38,
                    scale: 2,
                }),
            ),
            (AggFunc::Sum, Some(Float64), Some(Float64)),
            (AggFunc::Sum, Some(String), None),
            (AggFunc::Sum, None, None),
            (AggFunc::Min, Some(dec), Some(dec)),
            (AggFunc::Max, Some(Timestamp), Some(Timestamp)),
            (AggFunc::Max, Some(Boolean), None),
            (AggFunc::Avg, Some(Int32), Some(Int32)),
            (AggFunc::Avg, Some(Int64), Some(Int64)),
            (AggFunc::Avg, Some(Float64), Some(Float64)),
            (
                AggFunc::Avg,
                Some(dec),
                Some(Decimal {
                    precision: 38,
                    scale: 6,
                }),
            ),
            (
                AggFunc::Avg,
                Some(Decimal {
                    precision: 12,
                    scale: 7,
                }),
                Some(Decimal {
                    precision: 38,
                    scale: 7,
                }),
            ),
            (AggFunc::Avg, Some(Timestamp), None),
            (AggFunc::Avg, None, None),
        ] {
            assert_eq!(func.accumulator_type(arg), want, "{func:?} {arg:?}");
        }
        assert_eq!(AggFunc::CountDistinct.accumulator_type(None), None);
        assert_eq!(
            AggFunc::CountDistinct.accumulator_type(Some(String)),
            Some(Int64)
        );
        assert_eq!(AggFunc::Sum.call_name(Some("amount")), "sum(amount)");
        assert_eq!(AggFunc::Count.call_name(None), "count(*)");
        assert_eq!(
            AggFunc::CountDistinct.call_name(Some("customer_id")),
            "count(distinct customer_id)"
        );
    }
}
