//! Timestamps: milliseconds since the Unix epoch in UTC, read and written as RFC 3339.
//!
//! See docs/fixtures.md, "Given: input events" (timestamp values).

use time::OffsetDateTime;
use time::format_description::well_known::Rfc3339;

/// Parses an RFC 3339 instant (`2026-08-30T10:00:00Z`, optionally with a fraction) into
/// milliseconds since the epoch. Returns `None` for anything else, a bare time of day
/// included. Sub-millisecond digits must be zero.
pub fn parse_rfc3339(text: &str) -> Option<i64> {
    let t = OffsetDateTime::parse(text, &Rfc3339).ok()?;
    let nanos = t.unix_timestamp_nanos();
    if nanos % 1_000_000 != 0 {
        return None;
    }
    i64::try_from(nanos / 1_000_000).ok()
}

/// Whether a timestamp lies in the years 1 to 9999, the range Flink's TIMESTAMP holds.
pub fn in_range(ms: i64) -> bool {
    OffsetDateTime::from_unix_timestamp_nanos(i128::from(ms) * 1_000_000)
        .is_ok_and(|t| (1..=9999).contains(&t.year()))
}

/// Whether `text` is a bare time of day (`10:00`, `10:00:00.5`), which has no date.
pub fn is_time_of_day(text: &str) -> bool {
    let clock = text.split('.').next().unwrap_or("");
    let parts: Vec<&str> = clock.split(':').collect();
    (2..=3).contains(&parts.len())
        && parts
            .iter()
            .all(|p| (1..=2).contains(&p.len()) && p.bytes().all(|b| b.is_ascii_digit()))
}

/// Whether `text` is an RFC 3339 instant at all (whatever its precision).
pub fn is_rfc3339(text: &str) -> bool {
    OffsetDateTime::parse(text, &Rfc3339).is_ok()
}

/// Renders milliseconds since the epoch as RFC 3339 in UTC, with a millisecond fraction
/// only when it is not zero (`2026-08-30T10:00:00Z`, `2026-08-30T10:00:00.250Z`).
pub fn format_rfc3339(ms: i64) -> String {
    let Ok(t) = OffsetDateTime::from_unix_timestamp_nanos(i128::from(ms) * 1_000_000) else {
        return format!("{ms}ms");
    };
    let (y, mo, d) = (t.year(), u8::from(t.month()), t.day());
    let (h, mi, s) = (t.hour(), t.minute(), t.second());
    let frac = t.millisecond();
    if frac == 0 {
        format!("{y:04}-{mo:02}-{d:02}T{h:02}:{mi:02}:{s:02}Z")
    } else {
        format!("{y:04}-{mo:02}-{d:02}T{h:02}:{mi:02}:{s:02}.{frac:03}Z")
    }
}

/// Parses a timestamp as SQL writes it and Flink's CAST to TIMESTAMP(3) reads it
/// ([`crate::date_format::parse_cast`]): `2026-08-30 10:00:00`, with an optional fraction
/// (digits below a millisecond are cut), or a date alone (`2026-08-30`, midnight);
/// one-digit fields are accepted (`2026-8-3 1:2:3`), a `T` between date and time is not.
/// Milliseconds since the epoch, the wall-clock time read as UTC; `None` for what does not
/// read and for what the simulator does not follow (a year past 9999).
pub fn parse_sql_timestamp(text: &str) -> Option<i64> {
    match crate::date_format::parse_cast(text) {
        crate::date_format::Parsed::Time(ms) => Some(ms),
        _ => None,
    }
}

const MS_PER_DAY: i64 = 86_400_000;

/// The days from 1970-01-01 to a proleptic Gregorian date.
pub(crate) fn days_from_civil(y: i64, m: i64, d: i64) -> i64 {
    let y = if m <= 2 { y - 1 } else { y };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let doy = (153 * ((m + 9) % 12) + 2) / 5 + d - 1;
    era * 146_097 + yoe * 365 + yoe / 4 - yoe / 100 + doy - 719_468
}

/// A date as Flink writes it (`CAST(d AS STRING)`, JSON): `yyyy-MM-dd`, the year on four
/// digits.
pub fn format_date(days: i32) -> String {
    match time::Date::from_julian_day(days.saturating_add(2_440_588)) {
        Ok(d) => format!("{:04}-{:02}-{:02}", d.year(), u8::from(d.month()), d.day()),
        // Outside the years -9999 to 9999, which no date here reaches.
        Err(_) => days.to_string(),
    }
}

/// Reads a date written `yyyy-MM-dd` exactly (fixtures, JSON records, DATE literals, as
/// Java's ISO_LOCAL_DATE reads them), years 0 to 9999; `None` otherwise.
pub fn parse_iso_date(text: &str) -> Option<i32> {
    let b = text.as_bytes();
    if b.len() != 10 || b[4] != b'-' || b[7] != b'-' {
        return None;
    }
    let num = |r: std::ops::Range<usize>| -> Option<i64> {
        let s = &text[r];
        s.bytes()
            .all(|c| c.is_ascii_digit())
            .then(|| s.parse().ok())
            .flatten()
    };
    let (y, m, d) = (num(0..4)?, num(5..7)?, num(8..10)?);
    valid_date(y, m, d).then(|| i32::try_from(days_from_civil(y, m, d)).ok())?
}

/// Whether the year, month and day make a date of the years 0 to 9999 (Flink's
/// `isIllegalDate`, which says the opposite of its name).
fn valid_date(y: i64, m: i64, d: i64) -> bool {
    (0..=9999).contains(&y) && (1..=12).contains(&m) && (1..=month_length(y, m)).contains(&d)
}

/// The days of month `m` (1 to 12) of the proleptic Gregorian year `y`.
pub(crate) fn month_length(y: i64, m: i64) -> i64 {
    let leap = (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;
    match m {
        4 | 6 | 9 | 11 => 30,
        2 if leap => 29,
        2 => 28,
        _ => 31,
    }
}

/// Reads a string as Flink's CAST to DATE does (`DateTimeUtils.parseDate`): what follows a
/// first space that is not the first character is ignored (`2026-09-05 10:00:00` is the
/// 5th), then `y`, `y-m` or `y-m-d`, each part digits with spaces around it (a missing
/// month or day is 1), a date of the years 0 to 9999; `None` otherwise.
pub fn parse_sql_date(text: &str) -> Option<i32> {
    let s = match text.find(' ') {
        Some(space) if space > 0 => &text[..space],
        _ => text,
    };
    // Java's `trim` and `Integer.parseInt` of digits only (more than an int holds fails).
    let part = |p: &str| -> Option<i64> {
        let p = p.trim_matches(|c: char| c <= ' ');
        if p.is_empty() || !p.bytes().all(|c| c.is_ascii_digit()) {
            return None;
        }
        p.parse::<i32>().ok().map(i64::from)
    };
    let mut parts = s.splitn(3, '-');
    let y = part(parts.next()?)?;
    let m = parts.next().map_or(Some(1), part)?;
    let d = parts.next().map_or(Some(1), part)?;
    valid_date(y, m, d).then(|| i32::try_from(days_from_civil(y, m, d)).ok())?
}

/// The date of a timestamp (`CAST(t AS DATE)`) as Flink computes it: its milliseconds
/// divided by a day's, cut toward zero, so that a time on the day before 1970-01-01 (but
/// its midnight) is on 1970-01-01, and one before that a day late.
pub fn date_of(ms: i64) -> i32 {
    i32::try_from(ms / MS_PER_DAY).unwrap_or(i32::MAX)
}

/// A date's midnight (`CAST(d AS TIMESTAMP)`); `None` before the year 1, which a timestamp
/// does not hold.
pub fn midnight(days: i32) -> Option<i64> {
    let ms = i64::from(days) * MS_PER_DAY;
    in_range(ms).then_some(ms)
}

/// The units a duration is written in, largest first, with their milliseconds.
pub const DURATION_UNITS: [(&str, u64); 5] = [
    ("d", 86_400_000),
    ("h", 3_600_000),
    ("m", 60_000),
    ("s", 1000),
    ("ms", 1),
];

/// Reads a duration as the project files write it: a whole number and a unit, `d`, `h`,
/// `m`, `s` or `ms` (`5m`, `30d`, `1500ms`, `0s`). Milliseconds; `None` for anything else.
pub fn parse_duration(text: &str) -> Option<u64> {
    let digits = text.bytes().take_while(u8::is_ascii_digit).count();
    let (number, unit) = text.split_at(digits);
    if number.is_empty() || number.len() > 15 {
        return None;
    }
    let size = DURATION_UNITS.iter().find(|(u, _)| *u == unit)?.1;
    number.parse::<u64>().ok()?.checked_mul(size)
}

/// A duration in its canonical form: the largest unit that holds it whole (`90m`, `30d`,
/// `1500ms`, `0s`).
pub fn format_duration(ms: u64) -> String {
    if ms == 0 {
        return "0s".into();
    }
    let (unit, size) = DURATION_UNITS
        .iter()
        .find(|(_, size)| ms.is_multiple_of(*size))
        .expect("ms divides every duration");
    format!("{}{unit}", ms / size)
}

/// A field of a timestamp read as UTC, as Flink's EXTRACT computes it (DOW: 1 for Sunday
/// to 7 for Saturday). `None` for a timestamp outside the calendar's range.
///
/// Flink divides with Java's integer division, which cuts toward zero: the date fields
/// come from the day `ms / 86400000`, and the time fields from the remainder within the
/// day, hour and minute. After 1970 that is the calendar; before it, the date is a day late
/// and the time fields are negative (`1969-12-31 12:00:00` has day 1 of 1970 and hour
/// -12). This follows Flink.
pub fn extract(field: crate::expr::TimeField, ms: i64) -> Option<i64> {
    use crate::expr::TimeField;
    const DAY: i64 = 86_400_000;
    let date = || time::Date::from_julian_day(2_440_588 + i32::try_from(ms / DAY).ok()?).ok();
    Some(match field {
        TimeField::Year => i64::from(date()?.year()),
        TimeField::Month => i64::from(u8::from(date()?.month())),
        TimeField::Day => i64::from(date()?.day()),
        TimeField::DayOfWeek => i64::from(date()?.weekday().number_from_sunday()),
        TimeField::Hour => (ms % DAY) / 3_600_000,
        TimeField::Minute => (ms % 3_600_000) / 60_000,
        TimeField::Second => (ms % 60_000) / 1000,
    })
}

/// `FLOOR(t TO unit)`: the start of the unit that holds `ms` (floor division, so a time
/// before 1970 rounds toward the past too, as Flink's does).
pub fn floor_to(ms: i64, unit: crate::expr::TimeUnit) -> i64 {
    ms - ms.rem_euclid(unit.millis())
}

/// `CEIL(t TO unit)`: the end of the unit that holds `ms`, or `ms` itself when it starts
/// one. `None` past the year 9999 (where Flink writes a wrong year).
pub fn ceil_to(ms: i64, unit: crate::expr::TimeUnit) -> Option<i64> {
    let floor = floor_to(ms, unit);
    let ceil = if floor == ms {
        ms
    } else {
        floor.checked_add(unit.millis())?
    };
    in_range(ceil).then_some(ceil)
}

/// The timestamp `ms` moved by `interval`, as Flink computes `t + INTERVAL ...`: the
/// months first, on the calendar date (the day of the month kept, or cut to the last day
/// of a shorter month: January 31 plus one month is February 28 or 29), the time of day
/// unchanged; then the milliseconds. `None` outside the years 1 to 9999.
pub fn add_interval(ms: i64, interval: crate::expr::Interval) -> Option<i64> {
    const DAY: i64 = 86_400_000;
    let mut ms = ms;
    if interval.months != 0 {
        let (day, time_of_day) = (ms.div_euclid(DAY), ms.rem_euclid(DAY));
        let date = time::Date::from_julian_day(2_440_588 + i32::try_from(day).ok()?).ok()?;
        let month0 = i64::from(date.year()) * 12
            + i64::from(u8::from(date.month()) - 1)
            + i64::from(interval.months);
        let year = i32::try_from(month0.div_euclid(12)).ok()?;
        let month = time::Month::try_from(u8::try_from(month0.rem_euclid(12) + 1).ok()?).ok()?;
        let day_of_month = date.day().min(month.length(year));
        let moved = time::Date::from_calendar_date(year, month, day_of_month).ok()?;
        ms = (i64::from(moved.to_julian_day()) - 2_440_588) * DAY + time_of_day;
    }
    let ms = ms.checked_add(interval.millis)?;
    in_range(ms).then_some(ms)
}

/// A timestamp as Flink's CAST of a TIMESTAMP(3) to STRING writes it:
/// `2026-08-30 10:00:00.000`.
pub fn format_sql_timestamp(ms: i64) -> String {
    let Ok(t) = OffsetDateTime::from_unix_timestamp_nanos(i128::from(ms) * 1_000_000) else {
        return format!("{ms}ms");
    };
    format!(
        "{:04}-{:02}-{:02} {:02}:{:02}:{:02}.{:03}",
        t.year(),
        u8::from(t.month()),
        t.day(),
        t.hour(),
        t.minute(),
        t.second(),
        t.millisecond()
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn floor_and_ceil_to_a_unit_match_flink() {
        use crate::expr::TimeUnit::{Day, Hour, Minute, Second};
        let at = |s: &str| parse_sql_timestamp(s).unwrap();
        let floor = |s: &str, u| format_sql_timestamp(floor_to(at(s), u));
        let ceil = |s: &str, u| ceil_to(at(s), u).map(format_sql_timestamp);
        // What Flink 2.0 computes for TIMESTAMP(3) (probed through its SQL Gateway).
        let t = "2026-08-30 10:17:45.123";
        assert_eq!(floor(t, Second), "2026-08-30 10:17:45.000");
        assert_eq!(floor(t, Minute), "2026-08-30 10:17:00.000");
        assert_eq!(floor(t, Hour), "2026-08-30 10:00:00.000");
        assert_eq!(floor(t, Day), "2026-08-30 00:00:00.000");
        assert_eq!(ceil(t, Second).unwrap(), "2026-08-30 10:17:46.000");
        assert_eq!(ceil(t, Minute).unwrap(), "2026-08-30 10:18:00.000");
        assert_eq!(ceil(t, Hour).unwrap(), "2026-08-30 11:00:00.000");
        assert_eq!(ceil(t, Day).unwrap(), "2026-08-31 00:00:00.000");
        // A whole unit stays under CEIL; a larger unit still rounds it up.
        let whole = "2026-08-30 10:00:00";
        assert_eq!(ceil(whole, Hour).unwrap(), "2026-08-30 10:00:00.000");
        assert_eq!(ceil(whole, Day).unwrap(), "2026-08-31 00:00:00.000");
        // Before 1970 both round on the calendar, not toward zero.
        let before = "1969-12-31 23:59:59.999";
        assert_eq!(floor(before, Day), "1969-12-31 00:00:00.000");
        assert_eq!(floor(before, Second), "1969-12-31 23:59:59.000");
        assert_eq!(ceil(before, Second).unwrap(), "1970-01-01 00:00:00.000");
        assert_eq!(
            floor("1969-05-17 13:14:15.678", Hour),
            "1969-05-17 13:00:00.000"
        );
        assert_eq!(
            ceil("1969-05-17 13:14:15.678", Day).unwrap(),
            "1969-05-18 00:00:00.000"
        );
        // Past the year 9999 there is no TIMESTAMP.
        assert_eq!(
            ceil("9999-12-30 10:00:00", Day).unwrap(),
            "9999-12-31 00:00:00.000"
        );
        assert_eq!(ceil("9999-12-31 10:00:00", Day), None);
        assert_eq!(
            floor("0001-01-01 00:00:00.001", Day),
            "0001-01-01 00:00:00.000"
        );
    }

    #[test]
    fn intervals_move_months_on_the_calendar_then_milliseconds() {
        use crate::expr::Interval;
        let at = |s: &str| parse_sql_timestamp(s).unwrap();
        let shift = |s: &str, months: i32, millis: i64| {
            add_interval(at(s), Interval { months, millis }).map(format_sql_timestamp)
        };
        // As Flink: January 31 plus a month is the last of February; minus one from March
        // 31 too; the time of day stays.
        assert_eq!(
            shift("2024-01-31 10:00:00.5", 1, 0).unwrap(),
            "2024-02-29 10:00:00.500"
        );
        assert_eq!(
            shift("2024-03-31 10:00:00.5", -1, 0).unwrap(),
            "2024-02-29 10:00:00.500"
        );
        assert_eq!(
            shift("2024-03-31 10:00:00.5", 100, 0).unwrap(),
            "2032-07-31 10:00:00.500"
        );
        assert_eq!(
            shift("2024-03-31 10:00:00.5", -100, 0).unwrap(),
            "2015-11-30 10:00:00.500"
        );
        // Before 1970 the day is found by floor division, unlike EXTRACT.
        assert_eq!(
            shift("1969-12-31 12:00:00", 2, 0).unwrap(),
            "1970-02-28 12:00:00.000"
        );
        assert_eq!(
            shift("2024-03-31 10:00:00.5", 0, 86_399_999 + 999 * 86_400_000).unwrap(),
            "2026-12-26 10:00:00.499"
        );
        assert_eq!(
            shift("2024-03-31 10:00:00.5", 0, -300_250).unwrap(),
            "2024-03-31 09:55:00.250"
        );
        assert_eq!(shift("9999-12-31 00:00:00", 1, 0), None);
        assert_eq!(shift("0001-01-01 00:00:00", 0, -1), None);
    }

    #[test]
    fn durations_read_whole_units_and_render_in_the_largest_that_holds_them() {
        assert_eq!(parse_duration("5m"), Some(300_000));
        assert_eq!(parse_duration("30d"), Some(2_592_000_000));
        assert_eq!(parse_duration("1500ms"), Some(1500));
        assert_eq!(parse_duration("0s"), Some(0));
        for bad in ["", "5", "m", "5 m", "-5m", "1.5s", "5min", "5M", "10w"] {
            assert_eq!(parse_duration(bad), None, "{bad}");
        }
        assert_eq!(format_duration(300_000), "5m");
        assert_eq!(format_duration(5_400_000), "90m");
        assert_eq!(format_duration(2_592_000_000), "30d");
        assert_eq!(format_duration(1500), "1500ms");
        assert_eq!(format_duration(0), "0s");
        assert_eq!(format_duration(3_600_000), "1h");
    }

    #[test]
    fn round_trips() {
        let ms = parse_rfc3339("2026-08-30T10:00:00Z").unwrap();
        assert_eq!(ms, 1_788_084_000_000);
        assert_eq!(format_rfc3339(ms), "2026-08-30T10:00:00Z");
        assert_eq!(
            format_rfc3339(parse_rfc3339("2026-08-30T10:00:00.25Z").unwrap()),
            "2026-08-30T10:00:00.250Z"
        );
        assert_eq!(parse_rfc3339("10:00:00"), None);
    }

    #[test]
    fn sql_timestamps_read_as_flink_reads_them() {
        let ten = parse_rfc3339("2026-08-30T10:00:00Z");
        assert_eq!(parse_sql_timestamp("2026-08-30 10:00:00"), ten);
        assert_eq!(
            parse_sql_timestamp("2026-08-30 10:00:00.1239"),
            parse_rfc3339("2026-08-30T10:00:00.123Z")
        );
        assert_eq!(
            parse_sql_timestamp("2026-08-30"),
            parse_rfc3339("2026-08-30T00:00:00Z")
        );
        assert_eq!(
            parse_sql_timestamp("2026-8-3 1:2:3"),
            parse_rfc3339("2026-08-03T01:02:03Z")
        );
        assert_eq!(parse_sql_timestamp("2026-08-30T10:00:00"), None);
        assert_eq!(
            parse_sql_timestamp("2026-02-30"),
            parse_rfc3339("2026-02-28T00:00:00Z"),
            "a day past the month's end is its last day (Flink)"
        );
        assert_eq!(parse_sql_timestamp("2026-02-32"), None);
        assert_eq!(parse_sql_timestamp("bad"), None);
        // Java's formatter reads the month twice, `[MM][M]`, and takes a point alone.
        assert_eq!(
            parse_sql_timestamp("2026-011-05"),
            parse_rfc3339("2026-01-05T00:00:00Z")
        );
        assert_eq!(parse_sql_timestamp("2026-012-05"), None);
        assert_eq!(parse_sql_timestamp("2026-08-30 10:00:00."), ten);
        // Year 10000 on Flink, which the simulator does not follow.
        assert_eq!(parse_sql_timestamp("9999-12-31 24:00:00"), None);
        // Checked on Flink: no surrounding or doubled spaces, a four-digit year from 1, the
        // time with its seconds, and 24:00:00 as the next day's midnight.
        for refused in [
            " 2026-08-30 10:00:00 ",
            "2026-08-30  10:00:00",
            "26-08-30",
            "02026-08-30",
            "0000-01-01",
            "2026-08-30 10:00",
            "2026-08-30 24:00:01",
        ] {
            assert_eq!(parse_sql_timestamp(refused), None, "{refused:?}");
        }
        assert_eq!(
            parse_sql_timestamp("2026-08-30 24:00:00").map(format_sql_timestamp),
            Some("2026-08-31 00:00:00.000".into())
        );
        assert_eq!(
            format_sql_timestamp(ten.unwrap() + 120),
            "2026-08-30 10:00:00.120"
        );
    }

    #[test]
    fn dates_are_days_on_the_proleptic_calendar_and_a_timestamps_date_is_cut_as_flink_cuts_it() {
        for text in [
            "1970-01-01",
            "2024-02-29",
            "1969-12-31",
            "0000-01-01",
            "9999-12-31",
        ] {
            let d = parse_iso_date(text).unwrap();
            assert_eq!(format_date(d), text);
        }
        assert_eq!(parse_iso_date("1970-01-02"), Some(1));
        assert_eq!(parse_iso_date("1969-12-31"), Some(-1));
        for bad in [
            "2023-02-29",
            "2026-9-5",
            "2026-13-01",
            "10000-01-01",
            " 2026-01-01",
        ] {
            assert_eq!(parse_iso_date(bad), None, "{bad}");
        }
        let day = 86_400_000;
        assert_eq!(date_of(day + 1), 1);
        // Cut toward zero: noon on 1969-12-31 is on 1970-01-01, its midnight on itself.
        assert_eq!(date_of(-day / 2), 0);
        assert_eq!(date_of(-day), -1);
        assert_eq!(midnight(-1), Some(-day));
        assert_eq!(midnight(parse_iso_date("0000-01-01").unwrap()), None);
    }
}
