//! An Over node in Flink SQL (docs/over.md): the input's columns, then each call with the
//! node's window, `SUM(amount) OVER (PARTITION BY customer_id ORDER BY ordered_at ROWS
//! BETWEEN 2 PRECEDING AND CURRENT ROW)`, which Flink's planner runs as its event-time
//! OVER aggregation.

use streamform_ir::{AggCall, AggFunc, DataType, Field, FrameUnit, OverFrame};

use crate::sql::ident;

/// The query of an Over node reading `from`, whose input columns are `input`; each call
/// is named by its output column.
pub(super) fn over(
    from: &str,
    input: &[Field],
    partition_by: &[String],
    frame: &OverFrame,
    calls: &[AggCall],
) -> String {
    let mut cols: Vec<String> = input.iter().map(|f| ident(&f.name)).collect();
    let window = window(partition_by, frame);
    cols.extend(calls.iter().map(|c| {
        let call = format!("{} OVER ({window})", super::aggregate_call(c, input));
        // LAG of the time attribute would be a time attribute too, null on a partition's
        // first row, which Flink's Kafka sink cannot take as the record's time: it is
        // written as a plain timestamp.
        let call = match (c.func, c.ty) {
            (AggFunc::Lag(_), DataType::Timestamp) => format!("CAST({call} AS TIMESTAMP(3))"),
            _ => call,
        };
        format!("{call} AS {}", ident(&c.name()))
    }));
    format!("SELECT {} FROM {from}", cols.join(", "))
}

/// `PARTITION BY customer_id ORDER BY ordered_at RANGE BETWEEN INTERVAL '1' HOUR PRECEDING
/// AND CURRENT ROW`: a RANGE bound is written as a watermark delay is, in a form Flink's
/// code generation takes whatever the size. The default frame (RANGE back to the first
/// row) is not written.
fn window(partition_by: &[String], frame: &OverFrame) -> String {
    let partition = if partition_by.is_empty() {
        String::new()
    } else {
        let keys: Vec<String> = partition_by.iter().map(|k| ident(k)).collect();
        format!("PARTITION BY {} ", keys.join(", "))
    };
    let unit = match frame.unit {
        FrameUnit::Rows => "ROWS",
        FrameUnit::Range => "RANGE",
    };
    let start = match (frame.preceding, frame.unit) {
        // The default frame is left unwritten: Flink's parser refuses a frame beside LAG.
        (None, FrameUnit::Range) => {
            return format!("{partition}ORDER BY {}", ident(&frame.time));
        }
        (None, _) => "UNBOUNDED PRECEDING".to_string(),
        (Some(n), FrameUnit::Rows) => format!("{n} PRECEDING"),
        (Some(ms), FrameUnit::Range) => format!("{} PRECEDING", super::delay_interval(ms)),
    };
    format!(
        "{partition}ORDER BY {} {unit} BETWEEN {start} AND CURRENT ROW",
        ident(&frame.time)
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_range_bound_is_written_in_its_largest_whole_unit() {
        let frame = |unit, preceding| OverFrame {
            time: "at".into(),
            unit,
            preceding,
        };
        assert_eq!(
            window(&["c".into()], &frame(FrameUnit::Range, Some(3_600_000))),
            "PARTITION BY `c` ORDER BY `at` RANGE BETWEEN INTERVAL '1' HOUR PRECEDING AND CURRENT ROW"
        );
        assert_eq!(
            window(&["c".into()], &frame(FrameUnit::Range, Some(1_500))),
            "PARTITION BY `c` ORDER BY `at` RANGE BETWEEN INTERVAL '1.500' SECOND PRECEDING AND CURRENT ROW"
        );
        assert_eq!(
            window(&[], &frame(FrameUnit::Rows, Some(2))),
            "ORDER BY `at` ROWS BETWEEN 2 PRECEDING AND CURRENT ROW"
        );
        assert_eq!(window(&[], &frame(FrameUnit::Range, None)), "ORDER BY `at`");
    }
}
