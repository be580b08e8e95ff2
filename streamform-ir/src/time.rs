//! Timestamps: milliseconds since the Unix epoch in UTC, read and written as RFC 3339.
//!
//! Spec: project-format reference, "given" (timestamp values).

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

#[cfg(test)]
mod tests {
    use super::*;

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
}
