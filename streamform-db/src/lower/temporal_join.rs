//! An event-time temporal join: a source read `FOR SYSTEM_TIME AS OF` the probe side's
//! event time, as a versioned table (docs/joins.md, "Joins in time").

use streamform_ir::{Changelog, Expr, Field, JoinKind, KeyedState, Operator, State, join_schema};

use crate::diagnostic::Code;
use crate::temporal::AsOf;

use super::lowering::*;

impl Lowering<'_> {
    /// The source the right side scans directly, when it is read `AS OF` a column: its
    /// name and the clause.
    pub(super) fn as_of_of(&self, right: &Stream) -> Option<(String, AsOf)> {
        let id = right.current.as_ref()?;
        let node = self.nodes.iter().find(|n| &n.id == id)?;
        let Operator::Source { name, .. } = &node.op else {
            return None;
        };
        self.as_of
            .iter()
            .find(|(source, _)| source == name)
            .map(|(source, a)| (source.clone(), a.clone()))
    }

    /// The column of the join's left side (by its name there) that `as_of` names: its
    /// qualifier, when written, must be a relation of the left side, and an unqualified
    /// name must name one column there.
    pub(super) fn as_of_column(
        &self,
        j: &datafusion_expr::logical_plan::Join,
        left: &Stream,
        as_of: &AsOf,
    ) -> Lowered<(String, String)> {
        let written = match &as_of.qualifier {
            Some(q) => format!("{q}.{}", as_of.column),
            None => as_of.column.clone(),
        };
        let matches = |df: &datafusion_common::DFSchemaRef| -> Vec<usize> {
            df.iter()
                .enumerate()
                .filter(|(_, (q, f))| {
                    f.name().eq_ignore_ascii_case(&as_of.column)
                        && as_of.qualifier.as_ref().is_none_or(|want| {
                            q.is_some_and(|q| q.table().eq_ignore_ascii_case(want))
                        })
                })
                .map(|(i, _)| i)
                .collect()
        };
        let refuse = |message: String, help: String| {
            Err(self
                .err(Code::UnsupportedSql, message, &help)
                .with_span(Some(as_of.span.clone())))
        };
        let time = left.time.clone().unwrap_or_default();
        match matches(j.left.schema()).as_slice() {
            [i] => {
                // The column, and the time attribute as the left side writes it.
                let column = left
                    .schema
                    .get(*i)
                    .map(|f| f.name.clone())
                    .unwrap_or_default();
                let at = left.schema.iter().position(|f| f.name == time);
                let written_time = at
                    .and_then(|at| j.left.schema().iter().nth(at))
                    .map(|(q, f)| match q {
                        Some(q) => format!("{}.{}", q.table(), f.name()),
                        None => f.name().to_string(),
                    })
                    .unwrap_or_else(|| time.clone());
                Ok((column, written_time))
            }
            [] if !matches(j.right.schema()).is_empty() => refuse(
                format!(
                    "FOR SYSTEM_TIME AS OF names `{written}`, a column of the versioned table itself"
                ),
                format!(
                    "AS OF takes the time of each row of the join's left side: its event-time column, `{time}`, qualified by the left side's alias"
                ),
            ),
            [] => refuse(
                format!(
                    "FOR SYSTEM_TIME AS OF names `{written}`, which is no column of the join's left side"
                ),
                format!(
                    "AS OF takes the left side's event-time column, `{time}`, qualified by the left side's alias"
                ),
            ),
            _ => refuse(
                format!(
                    "FOR SYSTEM_TIME AS OF names `{written}`, which more than one relation of the join's left side has"
                ),
                format!(
                    "qualify it with the alias of the relation whose event time it is (`{time}`)"
                ),
            ),
        }
    }

    /// Joins `left` (the probe side) with `right`, an upsert source on event time read as
    /// a versioned table `AS OF` the probe side's time attribute (`column`, by its name on
    /// the left side), on its key.
    pub(super) fn temporal_join(
        &mut self,
        kind: JoinKind,
        on: Vec<(String, String)>,
        filter: Option<Expr>,
        [left, right]: [Stream; 2],
        (source, as_of, (column, written_time)): (String, AsOf, (String, String)),
    ) -> Lowered<()> {
        self.as_of_used.push(source.clone());
        let at = Some(as_of.span.clone());
        let refuse = |this: &Self, message: String, help: &str| {
            Err(this
                .err(Code::UnsupportedSql, message, help)
                .with_span(at.clone()))
        };
        if !matches!(kind, JoinKind::Inner | JoinKind::Left) {
            return refuse(
                self,
                format!(
                    "a temporal join is an inner or a LEFT JOIN, not a {} JOIN",
                    kind.name().to_uppercase()
                ),
                "write JOIN (only the probe rows with a version) or LEFT JOIN (every probe row, padded when no version is valid at its time)",
            );
        }
        let Some(left_time) = left.time.clone() else {
            return refuse(
                self,
                format!(
                    "FOR SYSTEM_TIME AS OF reads `{source}` at the time of each row of the join's left side, which has no event-time attribute"
                ),
                "the left side's rows carry event time when its source declares `event_time:` and the column reaches the join as it is (an expression over it, an aggregate or a regular join ends event time); a temporal join on processing time, or a lookup join, reads the table at the moment a row is processed, which no fixture can replay",
            );
        };
        if column != left_time {
            let written = match &as_of.qualifier {
                Some(q) => format!("{q}.{}", as_of.column),
                None => as_of.column.clone(),
            };
            return refuse(
                self,
                format!(
                    "FOR SYSTEM_TIME AS OF names `{written}`, which is not the event-time column of the join's left side, `{left_time}`"
                ),
                // The qualifier written names a relation of the left side (it was resolved).
                &format!(
                    "join AS OF the left side's event time: FOR SYSTEM_TIME AS OF {written_time}"
                ),
            );
        }
        if left.changelog.is_updating() && !right.changelog.is_updating() {
            return refuse(
                self,
                "the temporal join's left side updates and its right side appends: FOR SYSTEM_TIME AS OF is written on the versioned table, which comes on the right".into(),
                "swap the two sides: the appending stream FROM first, then JOIN source('<versioned table>') FOR SYSTEM_TIME AS OF <its alias>.<event-time column>",
            );
        }
        if left.changelog.is_updating() {
            return refuse(
                self,
                "the temporal join's left side updates; Flink joins only rows that are never changed with the version valid at their time".into(),
                "join the appending stream the updates come from, or aggregate after the join",
            );
        }
        let Changelog::Upsert(key) = &right.changelog else {
            return refuse(
                self,
                format!(
                    "`{source}` is read as a versioned table, but it is not an upsert source: its rows are not versions of a key"
                ),
                &format!(
                    "declare `changelog: upsert` with its `key:` on `{source}` in sources.yml, and `event_time:` for the time each version starts at"
                ),
            );
        };
        let Some(right_time) = right.time.clone() else {
            return refuse(
                self,
                format!(
                    "`{source}` is read as a versioned table, but it has no event time to say when each version starts"
                ),
                &format!(
                    "declare `event_time:` on `{source}` in sources.yml (with `late_events: keep`), the column each version starts at"
                ),
            );
        };
        let joined: Vec<&String> = on.iter().map(|(_, r)| r).collect();
        if joined.is_empty() {
            return refuse(
                self,
                format!(
                    "the temporal join's ON compares no column of the left side with the key of `{source}` ({}), each with AND",
                    key.join(", ")
                ),
                &format!(
                    "compare each column of the versioned table's key ({}) with a column of the left side, joined by AND",
                    key.join(", ")
                ),
            );
        }
        if key.iter().any(|k| !joined.contains(&k)) || joined.iter().any(|r| !key.contains(r)) {
            return refuse(
                self,
                format!(
                    "the temporal join must compare exactly the key of `{source}` ({}) with columns of the left side, and its ON compares [{}]",
                    key.join(", "),
                    joined
                        .iter()
                        .map(|s| s.as_str())
                        .collect::<Vec<_>>()
                        .join(", ")
                ),
                &format!(
                    "compare each column of the versioned table's key ({}) with a column of the left side, and nothing else; filter on other columns after the join",
                    key.join(", ")
                ),
            );
        }
        if filter.is_some() {
            return Err(self
                .err(
                    Code::UnsupportedSql,
                    "a temporal join's ON with a condition beside its key is not supported yet".into(),
                    "keep only the key's equalities in ON and filter the joined rows with WHERE (in a LEFT JOIN, a CASE over the version's columns keeps the unmatched rows)",
                )
                .with_span(self.on_span()));
        }
        let schema: Vec<Field> = join_schema(kind, &left.schema, &right.schema);
        let right_at = right
            .schema
            .iter()
            .position(|f| f.name == right_time)
            .unwrap_or(0);
        let right_time = schema[left.schema.len() + right_at].name.clone();
        self.boundedness = super::join::both_bounded(&left, &right);
        (self.changelog, self.unkeyed) = (Changelog::Append, None);
        self.time = Some(left_time.clone());
        self.clock = left.clock && right.clock;
        let state = State::Keyed(KeyedState::temporal_join(&on, &left.schema, &right.schema));
        let inputs = [left.current, right.current]
            .into_iter()
            .flatten()
            .collect();
        self.push_reading(
            Operator::TemporalJoin {
                kind,
                on,
                left_time,
                right_time,
            },
            schema,
            state,
            inputs,
        );
        Ok(())
    }
}
