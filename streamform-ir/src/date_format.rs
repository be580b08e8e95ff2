//! The patterns `DATE_FORMAT(t, pattern)` takes (docs/sql.md, "Formatting timestamps"):
//! Flink formats with Java's `DateTimeFormatter.ofPattern`, on the timestamp read as UTC.
//! The letters that print a number the same whatever the JVM's locale are accepted, with
//! Java's rules for how many are written:
//!
//! | letters | prints |
//! |---|---|
//! | `y`, `yyy`, `yyyy`, … (`u` too) | the year, padded with zeros to the number of letters |
//! | `yy` (`uu`) | the last two digits of the year |
//! | `M`, `MM` | the month, `MM` padded to two digits |
//! | `d`, `dd`; `D`, `DD`, `DDD` | the day of the month; the day of the year |
//! | `H`, `HH`; `h`, `hh` | the hour, 0 to 23; 1 to 12 |
//! | `m`, `mm`; `s`, `ss` | the minute; the second |
//! | `S` … `SSSSSSSSS` | that many digits of the fraction of the second |
//!
//! Anything else that is not a letter is printed as it is, and text in single quotes too
//! (`''` is a quote). Refused: every other letter (names of months and days, `a`, week
//! fields, zones: they depend on the locale or a zone, or are not Java's), letters repeated
//! more than Java allows (`ddd`), optional sections (`[…]`), and `{`, `}` and `#`, which
//! Java reserves. Java throws on a pattern it does not take, which fails Flink's job.
//!
//! TO_TIMESTAMP reads strings with the same patterns ([`TimestampParser`]).

use std::fmt::Write as _;

mod to_timestamp;

pub use to_timestamp::{Parsed, TimestampParser, parse_cast};

/// One piece of a pattern.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Piece {
    Text(String),
    /// The year, padded to `width`; `None` for the two-digit year. `era`: written `y`
    /// (the year of the era, which Java reads from 1), not `u`.
    Year {
        width: Option<usize>,
        era: bool,
    },
    Month(usize),
    DayOfMonth(usize),
    DayOfYear(usize),
    Hour(usize),
    ClockHour(usize),
    Minute(usize),
    Second(usize),
    /// This many digits of the fraction.
    Fraction(usize),
}

/// A DATE_FORMAT pattern, read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DatePattern(Vec<Piece>);

/// Reads `pattern` as Java's `DateTimeFormatter.ofPattern` would, keeping to the letters the
/// simulator prints exactly.
///
/// # Errors
/// What the pattern uses that is refused, for a message (`the letter 'E'`).
pub fn read(pattern: &str) -> Result<DatePattern, String> {
    let chars: Vec<char> = pattern.chars().collect();
    let mut pieces = Vec::new();
    let mut text = String::new();
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        if c == '\'' {
            // Quoted text, read as Java reads it: to the next quote not doubled, `''`
            // inside being a quote; an empty one (`''`) is a quote.
            let mut j = i + 1;
            loop {
                match chars.get(j) {
                    None => return Err("a quote that is not closed".into()),
                    Some('\'') if chars.get(j + 1) == Some(&'\'') => j += 2,
                    Some('\'') => break,
                    Some(_) => j += 1,
                }
            }
            let quoted: String = chars[i + 1..j].iter().collect();
            if quoted.is_empty() {
                text.push('\'');
            } else {
                text.push_str(&quoted.replace("''", "'"));
            }
            i = j + 1;
            continue;
        }
        if !c.is_ascii_alphabetic() {
            if matches!(c, '[' | ']' | '{' | '}' | '#') {
                return Err(format!("`{c}` (reserved by Java)"));
            }
            text.push(c);
            i += 1;
            continue;
        }
        let mut n = 1;
        while chars.get(i + n) == Some(&c) {
            n += 1;
        }
        let too_many = || {
            Err(format!(
                "'{}' (more letters than Java takes)",
                c.to_string().repeat(n)
            ))
        };
        let piece = match c {
            'y' | 'u' if n == 2 => Piece::Year {
                width: None,
                era: c == 'y',
            },
            // Java prints a number on at most 19 digits.
            'y' | 'u' if n <= 19 => Piece::Year {
                width: Some(n),
                era: c == 'y',
            },
            'M' if n <= 2 => Piece::Month(n),
            'M' => {
                return Err(format!(
                    "'{}' (a month's name, which depends on the locale)",
                    "M".repeat(n)
                ));
            }
            'd' if n <= 2 => Piece::DayOfMonth(n),
            'D' if n <= 3 => Piece::DayOfYear(n),
            'H' if n <= 2 => Piece::Hour(n),
            'h' if n <= 2 => Piece::ClockHour(n),
            'm' if n <= 2 => Piece::Minute(n),
            's' if n <= 2 => Piece::Second(n),
            'S' if n <= 9 => Piece::Fraction(n),
            'y' | 'u' | 'd' | 'D' | 'H' | 'h' | 'm' | 's' | 'S' => return too_many(),
            _ => return Err(format!("the letter '{c}'")),
        };
        if !text.is_empty() {
            pieces.push(Piece::Text(std::mem::take(&mut text)));
        }
        pieces.push(piece);
        i += n;
    }
    if !text.is_empty() {
        pieces.push(Piece::Text(text));
    }
    Ok(DatePattern(pieces))
}

impl DatePattern {
    /// `ms` (milliseconds since the epoch, read as UTC) printed by the pattern; `None`
    /// outside the years 1 to 9999.
    pub fn format(&self, ms: i64) -> Option<String> {
        let t = time::OffsetDateTime::from_unix_timestamp_nanos(i128::from(ms) * 1_000_000).ok()?;
        let mut out = String::new();
        let num = |out: &mut String, v: i64, width: usize| {
            let _ = write!(out, "{v:0width$}");
        };
        for p in &self.0 {
            match p {
                Piece::Text(s) => out.push_str(s),
                Piece::Year { width: None, .. } => {
                    num(&mut out, i64::from(t.year()).rem_euclid(100), 2);
                }
                Piece::Year { width: Some(w), .. } => num(&mut out, i64::from(t.year()), *w),
                Piece::Month(w) => num(&mut out, i64::from(u8::from(t.month())), *w),
                Piece::DayOfMonth(w) => num(&mut out, i64::from(t.day()), *w),
                Piece::DayOfYear(w) => num(&mut out, i64::from(t.ordinal()), *w),
                Piece::Hour(w) => num(&mut out, i64::from(t.hour()), *w),
                Piece::ClockHour(w) => {
                    let h = match t.hour() % 12 {
                        0 => 12,
                        h => h,
                    };
                    num(&mut out, i64::from(h), *w);
                }
                Piece::Minute(w) => num(&mut out, i64::from(t.minute()), *w),
                Piece::Second(w) => num(&mut out, i64::from(t.second()), *w),
                Piece::Fraction(n) => {
                    let nanos = format!("{:09}", t.nanosecond());
                    out.push_str(&nanos[..*n]);
                }
            }
        }
        Some(out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fmt(pattern: &str, rfc3339: &str) -> String {
        read(pattern)
            .unwrap()
            .format(crate::time::parse_rfc3339(rfc3339).unwrap())
            .unwrap()
    }

    #[test]
    fn numbers_are_padded_as_java_pads_them() {
        let t = "2026-09-05T07:04:03.120Z";
        assert_eq!(fmt("yyyy-MM-dd HH:mm:ss", t), "2026-09-05 07:04:03");
        assert_eq!(fmt("yy/M/d H:m:s", t), "26/9/5 7:4:3");
        assert_eq!(fmt("yyyyMMdd'T'HHmmss.SSS", t), "20260905T070403.120");
        assert_eq!(fmt("hh 'o''clock', D, S", t), "07 o'clock, 248, 1");
        assert_eq!(fmt("hh", "2026-09-05T00:30:00Z"), "12");
        assert_eq!(fmt("yyyy", "0042-01-01T00:00:00Z"), "0042");
        assert_eq!(fmt("y", "0042-01-01T00:00:00Z"), "42");
        assert_eq!(fmt("''", t), "'");
        // As Java reads quotes: `''''` is a quoted quote, one quote.
        assert_eq!(fmt("HH''''", t), "07'");
        assert_eq!(fmt("HH''''''", t), "07''");
        assert_eq!(fmt("''''HH", t), "'07");
        assert_eq!(fmt("'a'''", t), "a'");
        assert_eq!(fmt("'''T'''", t), "'T'");
    }

    #[test]
    fn what_depends_on_the_locale_or_is_not_javas_is_refused() {
        for p in [
            "MMM",
            "EEE",
            "a",
            "ddd",
            "yyyy-MM-dd[ HH]",
            "'open",
            "Z",
            "w",
            "T",
        ] {
            assert!(read(p).is_err(), "{p}");
        }
    }
}
