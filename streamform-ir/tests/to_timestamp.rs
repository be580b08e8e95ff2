//! TO_TIMESTAMP(s, pattern) against Flink's own function: every line of
//! data/to_timestamp.tsv is a pattern, a string and what Flink's
//! `DateTimeUtils.parseTimestampData(s, pattern)` returned for them (2.0 and 2.2 return the
//! same), printed as Java's `LocalDateTime` or `null`. The cases are the usual patterns
//! over well-formed strings, strings the fallback readers take, and random edits of both.
//! The simulator must give the same, or stop the run where it says it does not follow.

use streamform_ir::date_format::{self, Parsed};

/// Java's `LocalDateTime.toString` of a timestamp (milliseconds, UTC).
fn java_local_date_time(ms: i64) -> String {
    let t = time::OffsetDateTime::from_unix_timestamp_nanos(i128::from(ms) * 1_000_000).unwrap();
    let mut s = format!(
        "{:04}-{:02}-{:02}T{:02}:{:02}",
        t.year(),
        u8::from(t.month()),
        t.day(),
        t.hour(),
        t.minute()
    );
    let millis = t.millisecond();
    if t.second() > 0 || millis > 0 {
        s.push_str(&format!(":{:02}", t.second()));
    }
    if millis > 0 {
        s.push_str(&format!(".{millis:03}"));
    }
    s
}

fn unescape(s: &str) -> String {
    s.replace("\\t", "\t")
        .replace("\\n", "\n")
        .replace("\\\\", "\\")
}

/// Compares the simulator with Flink on every line of `data` (tab-separated fields, the
/// last being what Flink gave; `null` for the simulator's null, a Java exception for
/// `throws`): (cases alike, cases not followed).
fn compare(data: &str, ours: impl Fn(&[String]) -> Parsed, null: &str) -> (usize, usize) {
    let (mut same, mut unfollowed) = (0, 0);
    let mut wrong = Vec::new();
    for line in data.lines() {
        let mut cols: Vec<String> = line.split('\t').map(unescape).collect();
        let flink = cols.pop().unwrap();
        // Which exception Java throws does not matter: CAST fails, TRY_CAST is null.
        let flink = if flink.starts_with("throws") {
            "throws".to_string()
        } else {
            flink
        };
        let got = match ours(&cols) {
            Parsed::Time(ms) => java_local_date_time(ms),
            Parsed::Null => null.to_string(),
            Parsed::Unfollowed(_) => {
                unfollowed += 1;
                continue;
            }
        };
        if got == flink {
            same += 1;
        } else {
            wrong.push(format!("{cols:?}: Flink {flink}, simulator {got}"));
        }
    }
    assert!(
        wrong.is_empty(),
        "{} differ:\n{}",
        wrong.len(),
        wrong.join("\n")
    );
    (same, unfollowed)
}

#[test]
fn to_timestamp_reads_every_case_as_flink_does_or_says_it_does_not_follow() {
    let (same, unfollowed) = compare(
        include_str!("data/to_timestamp.tsv"),
        |cols| {
            let parser = date_format::read(&cols[0]).unwrap().parser().unwrap();
            parser.parse(&cols[1])
        },
        "null",
    );
    // Most cases are followed; the rest are dates before 1600 (Java's fallback reads them
    // on the Julian calendar), fractions below the millisecond and years past 9999.
    assert!(
        same > 2700 && unfollowed < 300,
        "{same} same, {unfollowed} not followed"
    );
}

#[test]
fn cast_to_timestamp_reads_every_case_as_flink_does_or_says_it_does_not_follow() {
    // data/cast_timestamp.tsv: a string and what Flink's CAST to TIMESTAMP(3)
    // (`DateTimeUtils.parseTimestampData(s, 3)`) gave, or that it threw (the CAST fails
    // the job, TRY_CAST is null): the forms Flink's formatter takes and random edits.
    let (same, unfollowed) = compare(
        include_str!("data/cast_timestamp.tsv"),
        |cols| date_format::parse_cast(&cols[0]),
        "throws",
    );
    assert!(
        same > 1400 && unfollowed < 20,
        "{same} same, {unfollowed} not followed"
    );
}

#[test]
fn cast_to_date_reads_every_case_as_flink_does() {
    // data/cast_date.tsv: a string and the date Flink's CAST to DATE
    // (`DateTimeUtils.parseDate`) read from it, or null (the CAST fails the job, TRY_CAST
    // is null), on Flink 2.0 and 2.2 alike.
    let mut wrong = Vec::new();
    for line in include_str!("data/cast_date.tsv").lines() {
        let (s, flink) = line.split_once('\t').unwrap();
        let s = unescape(s);
        let ours = streamform_ir::time::parse_sql_date(&s)
            .map_or_else(|| "null".to_string(), streamform_ir::time::format_date);
        if ours != flink {
            wrong.push(format!("{s:?}: Flink {flink}, simulator {ours}"));
        }
    }
    assert!(
        wrong.is_empty(),
        "{} differ:\n{}",
        wrong.len(),
        wrong.join("\n")
    );
}
