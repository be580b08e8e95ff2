//! The state one model's lowering carries from node to node, and how a node is added.

use sqlparser::ast::Query;
use streamform_ir::{Boundedness, Changelog, Field, Node, Operator, State, assign_id};

use crate::config::SourceDef;
use crate::diagnostic::{Code, Diagnostic};

/// The working state of one lowering: the chain built so far and the current output.
pub(super) struct Lowering<'a> {
    pub(super) model: &'a str,
    /// The model's SQL, to position diagnostics.
    pub(super) text: &'a str,
    pub(super) nodes: Vec<Node>,
    /// The current output schema (ours), positionally aligned with DataFusion's.
    pub(super) schema: Vec<Field>,
    pub(super) changelog: Changelog,
    pub(super) boundedness: Boundedness,
    /// Where the FROM clause is, for diagnostics about the input.
    pub(super) from_span: Option<std::ops::Range<usize>>,
    /// The time attribute of the current output (the event-time column, by its name here).
    pub(super) time: Option<String>,
    /// Whether an event-time source is upstream.
    pub(super) clock: bool,
    /// The query, to find where its parts are for an error past the aggregation, where the
    /// planner's columns no longer say where they were written (read only on an error).
    pub(super) query: &'a Query,
    /// Whether an aggregation has been lowered: a filter after it is the HAVING.
    pub(super) aggregated: bool,
    /// The window table the model reads, until its aggregation is lowered: the planner's
    /// schema then has the window's three columns after the input's, which no node before
    /// the window has.
    pub(super) window: Option<&'a crate::window::WindowRead>,
    /// Why the changelog is retracting, without a key (until an aggregation keys it again).
    pub(super) unkeyed: Option<Unkeyed>,
    /// The node the next node reads: the last one added to the current branch, or the Sink
    /// of the model a scan reads through `ref()`; `None` before the first scan.
    pub(super) current: Option<streamform_ir::NodeId>,
    /// The columns a join renamed (`customer_id0`), with the name the user wrote: a
    /// projection or a grouping names its output column so, as Flink does.
    pub(super) renamed: std::collections::HashMap<String, String>,
    /// While the SELECT list of a UNION ALL's later SELECT is lowered: the first SELECT's
    /// column names, which the union's columns take (an unnamed expression there is fine).
    pub(super) branch_names: Option<Vec<String>>,
    /// Keys other than the changelog's that identify the current output's rows, each one
    /// a model may be upserted by (a join's, docs/joins.md, "Tables that change"). A
    /// projection maps them; any other node but a filter leaves none.
    pub(super) other_keys: Vec<Vec<String>>,
    /// The sources read `FOR SYSTEM_TIME AS OF` a column (a temporal join), each with the
    /// clause.
    pub(super) as_of: Vec<(String, crate::temporal::AsOf)>,
    /// The sources of `as_of` a temporal join has read so far.
    pub(super) as_of_used: Vec<String>,
    /// A column the current schema has for the planner's sake only, which no node
    /// outputs: the row number of a rank that does not emit it, until a projection drops
    /// it (docs/ranking.md).
    pub(super) phantom: Option<String>,
    /// Whether the row number of each rank filter is read above it, by the filter's
    /// address in the planned query (see `rank::numbers_read`).
    pub(super) numbers_read: std::collections::HashMap<usize, bool>,
}

/// Why a changelog is retracting: it has updates but no key that identifies its rows.
#[derive(Debug, Clone)]
pub(super) enum Unkeyed {
    /// A projection dropped this key column of its updating input.
    DroppedKey(String),
    /// A UNION ALL of an updating input: its rows no longer have one key.
    Union,
    /// An outer join: a padded row is deleted when its match arrives.
    OuterJoin(streamform_ir::JoinKind),
    /// A rank of more than one row over an append input, without its row number (the
    /// partition columns, the row number's name, where ROW_NUMBER is called): a row pushed
    /// out of the top is deleted.
    Rank(Vec<String>, String, Option<std::ops::Range<usize>>),
    /// A join with an updating side (which ones, as the message says them: `left side
    /// carries`) and why its rows have no key: a change on it retracts the joined rows and
    /// adds them again.
    UpdatingJoin(&'static str, String),
}

/// The output of one branch of the model, while another is lowered (docs/sql.md, "Several
/// inputs").
pub(super) struct Stream {
    pub(super) current: Option<streamform_ir::NodeId>,
    pub(super) schema: Vec<Field>,
    pub(super) changelog: Changelog,
    pub(super) boundedness: Boundedness,
    pub(super) time: Option<String>,
    pub(super) clock: bool,
    /// Keys other than the changelog's that identify the branch's rows.
    pub(super) other_keys: Vec<Vec<String>>,
}

/// Where a query's select items, WHERE and HAVING are in the model's text.
#[derive(Default)]
pub(super) struct Parts {
    pub(super) items: Vec<std::ops::Range<usize>>,
    pub(super) selection: Option<std::ops::Range<usize>>,
    pub(super) having: Option<std::ops::Range<usize>>,
}

impl Parts {
    pub(super) fn of(query: &Query, text: &str) -> Parts {
        use sqlparser::ast::{SetExpr, Spanned};
        let SetExpr::Select(select) = query.body.as_ref() else {
            return Parts::default();
        };
        Parts {
            items: (0..select.projection.len())
                .map_while(|i| item_span(select, i, text))
                .collect(),
            selection: select
                .selection
                .as_ref()
                .and_then(|w| crate::sql::byte_span(text, w.span())),
            having: select
                .having
                .as_ref()
                .and_then(|h| crate::sql::byte_span(text, h.span())),
        }
    }
}

/// Where select item `i` is: the parser's span of `-x` or `CAST(x AS t)` starts at `x`, so
/// the item starts where the one before it (or SELECT) ends, past the comma.
pub(super) fn item_span(
    select: &sqlparser::ast::Select,
    i: usize,
    text: &str,
) -> Option<std::ops::Range<usize>> {
    use sqlparser::ast::Spanned;
    let at = crate::sql::byte_span(text, select.projection.get(i)?.span())?;
    let before = match i {
        0 => select.select_token.0.span,
        _ => select.projection[i - 1].span(),
    };
    let start = crate::sql::byte_span(text, before)
        .map(|b| b.end)
        .filter(|&end| end <= at.start)
        .map_or(at.start, |end| {
            let gap = &text[end..at.start];
            end + gap.len()
                - gap
                    .trim_start_matches(|c: char| c.is_whitespace() || c == ',')
                    .len()
        });
    Some(start..at.end)
}

pub(super) type Lowered<T> = Result<T, Diagnostic>;

impl Lowering<'_> {
    pub(super) fn err(&self, code: Code, message: String, help: &str) -> Diagnostic {
        Diagnostic::error(code, format!("model `{}`: {message}", self.model)).with_help(help)
    }

    /// The current branch's output, taken so that another branch can be lowered.
    ///
    /// # Errors
    /// A branch that still carries a rank's row number it does not emit: the join or
    /// union would carry the planner's column further than the rank's rows do.
    pub(super) fn take_stream(&mut self) -> Lowered<Stream> {
        if let Some(number) = &self.phantom {
            return Err(self.err(
                Code::UnsupportedSql,
                format!("a join or UNION ALL of a ranked subquery whose row number `{number}` is not selected is not supported yet"),
                "rank in a model of its own and read it with ref(), or select the row number in the query around the join",
            ));
        }
        Ok(Stream {
            current: self.current.take(),
            schema: std::mem::take(&mut self.schema),
            changelog: std::mem::replace(&mut self.changelog, Changelog::Append),
            boundedness: self.boundedness,
            time: self.time.take(),
            clock: self.clock,
            other_keys: std::mem::take(&mut self.other_keys),
        })
    }

    /// Adds a node reading the current output (the node before it in the branch).
    pub(super) fn push(&mut self, op: Operator, schema: Vec<Field>, state: State) {
        let inputs = self.current.iter().cloned().collect();
        self.push_reading(op, schema, state, inputs);
    }

    /// Adds a node reading `inputs`, which becomes the current output.
    pub(super) fn push_reading(
        &mut self,
        op: Operator,
        schema: Vec<Field>,
        state: State,
        inputs: Vec<streamform_ir::NodeId>,
    ) {
        if !matches!(op, Operator::Filter { .. } | Operator::Project { .. }) {
            self.other_keys.clear();
        }
        let id = assign_id(self.model, &self.nodes, op.kind());
        // Before its window, a node's rows do not have the window's columns yet.
        let own: Vec<Field> = schema
            .iter()
            .filter(|f| {
                !(self.window.is_some() && streamform_ir::WINDOW_COLUMNS.contains(&f.name.as_str()))
                    && self.phantom.as_deref() != Some(f.name.as_str())
            })
            .cloned()
            .collect();
        self.current = Some(id.clone());
        self.nodes.push(Node {
            id,
            op,
            inputs,
            schema: own,
            boundedness: self.boundedness,
            changelog: self.changelog.clone(),
            state,
            time: self.time.clone(),
        });
        self.schema = schema;
    }
}

/// A source's columns as plan fields: every source column may be null.
pub(super) fn source_fields(def: &SourceDef) -> Vec<Field> {
    def.schema
        .iter()
        .map(|(n, t)| Field {
            name: n.clone(),
            ty: *t,
            // An upsert source's key is Flink's PRIMARY KEY, which is NOT NULL.
            nullable: !def.key.as_ref().is_some_and(|k| k.contains(n)),
        })
        .collect()
}
