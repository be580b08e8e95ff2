//! A window table read by a rank (docs/ranking.md, "A top per window"): as Flink's window
//! table function does, each row of the append input is passed on at once, one copy for
//! every aligned window it belongs to (earliest end first), with the window's start, end
//! and time (end minus 1 ms) after its columns. It keeps nothing and drops nothing: the
//! rank after it drops the copies whose window has fired.

use std::borrow::Cow;

use streamform_ir::{DataType, Node, Value, WINDOW_COLUMNS, Window, WindowKind};

use super::window::{window_ends, window_start};
use crate::eval::resolve;
use crate::operator::{Fault, InputShape, Operator, Out, Rec, appended_time};

pub(crate) struct WindowTable {
    kind: WindowKind,
    /// The input's time column.
    time: usize,
    time_name: String,
    /// The ends of the current row's windows.
    ends: Vec<i64>,
}

impl WindowTable {
    pub(crate) fn build(
        node: &Node,
        window: &Window,
        input: &InputShape<'_>,
    ) -> Result<WindowTable, Fault> {
        let id = &node.id;
        input.appends(node, "a window table")?;
        if matches!(window.kind, WindowKind::Session { .. }) {
            return Err(Fault::plain(format!(
                "node `{id}`: a window table assigns aligned windows (TUMBLE, HOP, CUMULATE), not sessions"
            )));
        }
        let time = resolve(input.schema, &window.time).map_err(|m| Fault::at(&window.time, m))?;
        if input.schema[time].ty != DataType::Timestamp {
            return Err(Fault::at(
                &window.time,
                format!("node `{id}`: a window is measured on a timestamp column"),
            ));
        }
        // Its schema: the input's columns, then the window's three.
        let expected = input.schema.len() + WINDOW_COLUMNS.len();
        let same = node.schema.len() == expected
            && node
                .schema
                .iter()
                .zip(input.schema)
                .all(|(a, b)| a.ty == b.ty && a.name == b.name)
            && node.schema[input.schema.len()..]
                .iter()
                .zip(WINDOW_COLUMNS)
                .all(|(f, name)| f.name == name && f.ty == DataType::Timestamp);
        if !same {
            return Err(Fault::plain(format!(
                "node `{id}`: a window table's columns are its input's, then {}",
                WINDOW_COLUMNS.join(", ")
            )));
        }
        Ok(WindowTable {
            kind: window.kind,
            time,
            time_name: window.time.clone(),
            ends: Vec::new(),
        })
    }
}

impl Operator for WindowTable {
    fn on_change<'a>(
        &'a mut self,
        rec: Rec<'a>,
        _time: Option<i64>,
        out: &mut Out<'a>,
    ) -> Result<Option<Rec<'a>>, Fault> {
        let t = appended_time(&rec, self.time, &self.time_name, "a window table")?;
        window_ends(self.kind, t, &mut self.ends);
        let mut first = None;
        out.reserve(self.ends.len().saturating_sub(1));
        for &end in &self.ends {
            let start = window_start(self.kind, end);
            if !(streamform_ir::time::in_range(start) && streamform_ir::time::in_range(end)) {
                return Err(Fault::window_out_of_range(&self.time_name, start));
            }
            let mut row = Vec::with_capacity(rec.row.len() + WINDOW_COLUMNS.len());
            row.extend_from_slice(&rec.row);
            row.extend([
                Value::Timestamp(start),
                Value::Timestamp(end),
                Value::Timestamp(end - 1),
            ]);
            let copy = Rec::insert(Cow::Owned(row));
            match first {
                None => first = Some(copy),
                Some(_) => out.emit(copy, Some(t)),
            }
        }
        Ok(first)
    }
}
