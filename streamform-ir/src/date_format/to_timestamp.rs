//! `TO_TIMESTAMP(s, pattern)` (docs/sql.md, "Reading timestamps"): Flink reads `s` with
//! Java's `DateTimeFormatter.ofPattern(pattern)` (strict parsing, the SMART resolver), fills
//! what the pattern leaves out with 1970-01-01 00:00:00, and cuts the fraction to
//! milliseconds. When that fails, it reads the trimmed string as `java.sql.Timestamp` does
//! (`yyyy-[m]m-[d]d hh:mm:ss[.f…]`, the fields added up leniently: a 31st of February is
//! in March) when it holds a space, else as `java.sql.Date` does (`yyyy-[m]m-[d]d`); what
//! neither reads is null.
//!
//! The patterns taken are the numeric letters of [`super::read`] that make a whole date,
//! a whole time or both: the year (`y` or `u`, `yy` being 2000 to 2099), the month and the
//! day together or none of them, and the hour, then optionally the minutes, then the
//! seconds, then their fraction (`S`…). A pattern that leaves a field unresolved (a month
//! without a day, the hour on a 12-hour clock without the half of the day) or names one
//! twice is refused, since Java then reads fields in ways that depend on what else
//! parsed or fails the job.
//!
//! What the simulator does not follow stops the run rather than guessing: a result outside
//! the years 1 to 9999, a lenient result before 1600 (Java's lenient calendar is Julian
//! before October 1582), a digit other than ASCII where Java's lenient reading takes
//! every Unicode digit, or a number of more than 38 digits.

use super::{DatePattern, Piece};

/// A field a pattern letter reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Field {
    /// `y`: the year of the era, from 1.
    YearOfEra,
    /// `u`: the proleptic year.
    Year,
    Month,
    Day,
    Hour,
    Minute,
    Second,
}

/// How a number parser takes a sign (Java's `SignStyle`), in strict parsing.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Sign {
    /// A `-` only.
    Normal,
    /// None.
    NotNegative,
    /// `+` only where the number is longer than its width, `-` always.
    ExceedsPad,
}

/// One element of the parser Java builds from a pattern.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Elem {
    Text(Vec<char>),
    Number {
        field: Field,
        min: usize,
        max: usize,
        sign: Sign,
        /// Java's adjacent value parsing: the widths of the fixed-width numbers that follow
        /// without text between, reserved by this one (> 0); -1 for one of those followers.
        subsequent: i64,
        /// `yy`: two digits read as 2000 to 2099.
        reduced: bool,
    },
    /// `S`…`S`: exactly this many digits of the fraction of the second.
    Fraction(usize),
}

impl Elem {
    /// Whether Java appends it as a fixed-width number that an adjacent one before it
    /// reserves room for.
    fn fixed(&self) -> bool {
        match self {
            Elem::Number { min, max, sign, .. } => min == max && *sign == Sign::NotNegative,
            Elem::Fraction(_) => true,
            Elem::Text(_) => false,
        }
    }

    fn set_subsequent(&mut self, to: impl FnOnce(i64) -> i64) {
        if let Elem::Number { subsequent, .. } = self {
            *subsequent = to(*subsequent);
        }
    }
}

/// A TO_TIMESTAMP pattern, read into the parser Java builds from it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TimestampParser {
    elems: Vec<Elem>,
}

/// What TO_TIMESTAMP gives for one string.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Parsed {
    /// Milliseconds since the epoch, the wall-clock time read as UTC.
    Time(i64),
    /// Neither the pattern nor the fallback reads the string.
    Null,
    /// A case the simulator does not follow, and why.
    Unfollowed(String),
}

impl DatePattern {
    /// The parser of this pattern for TO_TIMESTAMP.
    ///
    /// # Errors
    /// What makes the pattern one TO_TIMESTAMP does not take, for a message.
    pub fn parser(&self) -> Result<TimestampParser, String> {
        let mut fields: Vec<Field> = Vec::new();
        let mut fraction = false;
        let mut elems: Vec<Elem> = Vec::new();
        // The element adjacent numbers attach to (Java's `valueParserIndex`).
        let mut active: Option<usize> = None;
        for piece in &self.0 {
            let (elem, field) = match piece {
                Piece::Text(t) => {
                    elems.push(Elem::Text(t.chars().collect()));
                    active = None;
                    continue;
                }
                Piece::Year { width, era } => {
                    let field = if *era { Field::YearOfEra } else { Field::Year };
                    let elem = match width {
                        None => number(field, 2, 2, Sign::NotNegative, true),
                        Some(n @ (1 | 3)) => number(field, *n, 19, Sign::Normal, false),
                        Some(n) => number(field, *n, 19, Sign::ExceedsPad, false),
                    };
                    (elem, Some(field))
                }
                Piece::Month(n) => (width_number(Field::Month, *n), Some(Field::Month)),
                Piece::DayOfMonth(n) => (width_number(Field::Day, *n), Some(Field::Day)),
                Piece::Hour(n) => (width_number(Field::Hour, *n), Some(Field::Hour)),
                Piece::Minute(n) => (width_number(Field::Minute, *n), Some(Field::Minute)),
                Piece::Second(n) => (width_number(Field::Second, *n), Some(Field::Second)),
                Piece::Fraction(n) => {
                    if fraction {
                        return Err("the fraction twice".into());
                    }
                    fraction = true;
                    (Elem::Fraction(*n), None)
                }
                Piece::DayOfYear(_) => return Err("the day of the year ('D')".into()),
                Piece::ClockHour(_) => {
                    return Err(
                        "the hour of a 12-hour clock ('h'), which needs the half of the day, a name that depends on the locale"
                            .into(),
                    );
                }
            };
            if let Some(f) = field {
                let same = |g: &Field| {
                    *g == f
                        || matches!(
                            (g, f),
                            (Field::Year, Field::YearOfEra) | (Field::YearOfEra, Field::Year)
                        )
                };
                if fields.iter().any(same) {
                    return Err(format!("the {} twice", field_name(f)));
                }
                fields.push(f);
            }
            // Java's adjacent value parsing (`DateTimeFormatterBuilder.appendValue`).
            let fixed = elem.fixed();
            elems.push(elem);
            let at = elems.len() - 1;
            match active {
                Some(a) if fixed => {
                    let width = match &elems[at] {
                        Elem::Number { max, .. } => *max,
                        Elem::Fraction(n) => *n,
                        Elem::Text(_) => 0,
                    };
                    let width = i64::try_from(width).unwrap_or(i64::MAX);
                    elems[a].set_subsequent(|s| s.max(0) + width);
                    elems[at].set_subsequent(|_| -1);
                }
                Some(a) => {
                    elems[a].set_subsequent(|_| -1);
                    active = Some(at);
                }
                None => active = Some(at),
            }
        }
        let has = |f: Field| fields.contains(&f);
        let year = has(Field::Year) || has(Field::YearOfEra);
        let date = [year, has(Field::Month), has(Field::Day)];
        if date.iter().any(|d| *d) && !date.iter().all(|d| *d) {
            return Err("part of a date (the year, the month and the day go together)".into());
        }
        let time = [
            has(Field::Hour),
            has(Field::Minute),
            has(Field::Second),
            fraction,
        ];
        let prefix = time.iter().position(|t| !t).unwrap_or(time.len());
        if time[prefix..].iter().any(|t| *t) {
            return Err(
                "part of a time (the minutes need the hour, the seconds the minutes, the fraction the seconds)"
                    .into(),
            );
        }
        if !date[0] && !time[0] {
            return Err("no date and no time".into());
        }
        Ok(TimestampParser { elems })
    }
}

fn number(field: Field, min: usize, max: usize, sign: Sign, reduced: bool) -> Elem {
    Elem::Number {
        field,
        min,
        max,
        sign,
        subsequent: 0,
        reduced,
    }
}

/// `M`, `d`, `H`, `m`, `s`: one letter reads 1 to 19 digits, two letters exactly two.
fn width_number(field: Field, letters: usize) -> Elem {
    if letters == 1 {
        number(field, 1, 19, Sign::Normal, false)
    } else {
        number(field, 2, 2, Sign::NotNegative, false)
    }
}

fn field_name(f: Field) -> &'static str {
    match f {
        Field::YearOfEra | Field::Year => "year",
        Field::Month => "month",
        Field::Day => "day",
        Field::Hour => "hour",
        Field::Minute => "minutes",
        Field::Second => "seconds",
    }
}

/// The values a string parsed into, before they are resolved.
#[derive(Default)]
struct Values {
    year_of_era: Option<i128>,
    year: Option<i128>,
    month: Option<i128>,
    day: Option<i128>,
    hour: Option<i128>,
    minute: Option<i128>,
    second: Option<i128>,
    nanos: Option<i128>,
}

impl Values {
    fn set(&mut self, f: Field, v: i128) {
        let slot = match f {
            Field::YearOfEra => &mut self.year_of_era,
            Field::Year => &mut self.year,
            Field::Month => &mut self.month,
            Field::Day => &mut self.day,
            Field::Hour => &mut self.hour,
            Field::Minute => &mut self.minute,
            Field::Second => &mut self.second,
        };
        *slot = Some(v);
    }
}

/// A parse that went wrong: Java fails it (and falls back), or the simulator cannot follow.
enum Miss {
    Fails,
    Unfollowed(String),
}

const TOO_LONG: &str = "a number of more than 38 digits";

impl TimestampParser {
    /// TO_TIMESTAMP of `s` with this pattern.
    pub fn parse(&self, s: &str) -> Parsed {
        let text: Vec<char> = s.chars().collect();
        match self.parse_fields(&text).and_then(|v| resolve(&v)) {
            Ok(ms) => in_range(ms),
            Err(Miss::Unfollowed(why)) => Parsed::Unfollowed(why),
            Err(Miss::Fails) => fallback(s),
        }
    }

    fn parse_fields(&self, text: &[char]) -> Result<Values, Miss> {
        let mut values = Values::default();
        let mut pos = 0;
        for elem in &self.elems {
            match elem {
                Elem::Text(t) => {
                    if text.get(pos..pos + t.len()) != Some(t.as_slice()) {
                        return Err(Miss::Fails);
                    }
                    pos += t.len();
                }
                Elem::Fraction(n) => {
                    let digits = text.get(pos..pos + n).ok_or(Miss::Fails)?;
                    let mut v: i128 = 0;
                    for c in digits {
                        v = v * 10
                            + i128::from(
                                c.to_digit(10).filter(|_| c.is_ascii()).ok_or(Miss::Fails)?,
                            );
                    }
                    let scale = 9 - u32::try_from(*n).unwrap_or(9);
                    values.nanos = Some(v * 10_i128.pow(scale));
                    pos += n;
                }
                Elem::Number {
                    field,
                    min,
                    max,
                    sign,
                    subsequent,
                    reduced,
                } => {
                    let (mut v, end) = parse_number(text, pos, (*min, *max, *sign, *subsequent))?;
                    if *reduced {
                        // Two digits from the base year 2000.
                        v += 2000;
                    }
                    values.set(*field, v);
                    pos = end;
                }
            }
        }
        if pos != text.len() {
            return Err(Miss::Fails);
        }
        Ok(values)
    }
}

/// Java's `NumberPrinterParser.parse` in strict mode: the number at `pos`, and where it ends.
fn parse_number(
    text: &[char],
    mut pos: usize,
    (min, max, sign, subsequent): (usize, usize, Sign, i64),
) -> Result<(i128, usize), Miss> {
    let (mut negative, mut positive) = (false, false);
    match text.get(pos) {
        None => return Err(Miss::Fails),
        Some('+') => {
            if sign != Sign::ExceedsPad {
                return Err(Miss::Fails);
            }
            positive = true;
            pos += 1;
        }
        Some('-') => {
            if sign == Sign::NotNegative {
                return Err(Miss::Fails);
            }
            negative = true;
            pos += 1;
        }
        Some(_) => {}
    }
    let digits_from = pos;
    let min_end = digits_from + min;
    if min_end > text.len() {
        return Err(Miss::Fails);
    }
    // A number followed by fixed-width ones reads as many digits as it can, then gives
    // back the width they reserve.
    let reserve = usize::try_from(subsequent.max(0)).unwrap_or(0);
    let (mut total, mut end) = digits(text, digits_from, max + reserve)?;
    if reserve > 0 {
        let width = min.max((end - digits_from).saturating_sub(reserve));
        (total, end) = digits(text, digits_from, width)?;
    }
    if end < min_end {
        return Err(Miss::Fails);
    }
    let len = end - digits_from;
    if negative {
        if total == 0 {
            // `-0` is refused.
            return Err(Miss::Fails);
        }
        total = -total;
    } else if sign == Sign::ExceedsPad && ((positive && len <= min) || (!positive && len > min)) {
        return Err(Miss::Fails);
    }
    // Java reads a number past a long's range one digit short, and goes on from there.
    if len > 18 && total.unsigned_abs() > u128::from(i64::MAX.unsigned_abs()) {
        total /= 10;
        end -= 1;
    }
    Ok((total, end))
}

/// The ASCII digits from `from`, at most `max` of them: their value and where they end.
fn digits(text: &[char], from: usize, max: usize) -> Result<(i128, usize), Miss> {
    let mut total: i128 = 0;
    let mut end = from;
    let max_end = (from + max).min(text.len());
    while end < max_end {
        let Some(d) = text[end].to_digit(10).filter(|_| text[end].is_ascii()) else {
            break;
        };
        end += 1;
        // Java keeps reading into a BigInteger; an i128 holds the widest number a pattern
        // reads here (19 digits and the widths reserved after them).
        if end - from > 38 {
            return Err(Miss::Unfollowed(TOO_LONG.into()));
        }
        total = total * 10 + i128::from(d);
    }
    Ok((total, end))
}

const MS_PER_DAY: i128 = 86_400_000;

/// The days from 1970-01-01 to a date whose fields are in range (years within a billion).
fn days_from_civil(y: i128, m: i128, d: i128) -> i128 {
    let field = |v: i128| i64::try_from(v).unwrap_or(i64::MAX);
    i128::from(crate::time::days_from_civil(field(y), field(m), field(d)))
}

/// Java's SMART resolution of the parsed fields, and Flink's defaults for the rest.
fn resolve(v: &Values) -> Result<i128, Miss> {
    const YEAR_MAX: i128 = 999_999_999;
    let date = match (v.year_of_era, v.year) {
        (None, None) => days_from_civil(1970, 1, 1),
        (yoe, year) => {
            let y = match (yoe, year) {
                (Some(yoe), _) if !(1..=YEAR_MAX + 1).contains(&yoe) => return Err(Miss::Fails),
                (Some(yoe), _) => yoe,
                (None, Some(y)) => y,
                (None, None) => unreachable!("matched above"),
            };
            if !(-YEAR_MAX..=YEAR_MAX).contains(&y) {
                return Err(Miss::Fails);
            }
            // Without both, Java leaves the date unresolved: each field is checked alone,
            // and Flink takes 1 for the missing one.
            let (m, d) = (v.month.unwrap_or(1), v.day.unwrap_or(1));
            if !(1..=12).contains(&m) || !(1..=31).contains(&d) {
                return Err(Miss::Fails);
            }
            // SMART: a day past the month's end is its last day.
            let last = crate::time::month_length(
                i64::try_from(y).unwrap_or(0),
                i64::try_from(m).unwrap_or(1),
            );
            days_from_civil(y, m, d.min(i128::from(last)))
        }
    };
    let time = resolve_time(v, v.year.is_some() || v.year_of_era.is_some())?;
    Ok(date * MS_PER_DAY + time)
}

/// The time of day in milliseconds, as Java's SMART resolver and Flink's defaults make
/// it: with the hour and a combination Java completes (no seconds without minutes, no
/// fraction without seconds), a checked time, 24:00 being the next day's midnight where
/// there is a day (`with_date`); otherwise each field checked alone, the missing ones 0.
fn resolve_time(v: &Values, with_date: bool) -> Result<i128, Miss> {
    let (mi, s, n) = (v.minute, v.second, v.nanos);
    let completes = !((mi.is_none() && (s.is_some() || n.is_some()))
        || (mi.is_some() && s.is_none() && n.is_some()));
    let (h, mi, s, n) = (v.hour, mi.unwrap_or(0), s.unwrap_or(0), n.unwrap_or(0));
    if let (Some(24), true, 0, 0, 0) = (h, completes, mi, s, n) {
        return Ok(if with_date { MS_PER_DAY } else { 0 });
    }
    let h = h.unwrap_or(0);
    if !(0..=23).contains(&h) || !(0..=59).contains(&mi) || !(0..=59).contains(&s) {
        return Err(Miss::Fails);
    }
    Ok(((h * 60 + mi) * 60 + s) * 1000 + n / 1_000_000)
}

fn in_range(ms: i128) -> Parsed {
    match i64::try_from(ms) {
        Ok(ms) if crate::time::in_range(ms) => Parsed::Time(ms),
        _ => Parsed::Unfollowed("a time outside the years 1 to 9999".into()),
    }
}

/// `CAST(s AS TIMESTAMP)` as Flink reads it, with Java's formatter
/// `yyyy-[MM][M]-[dd][d][ [HH][H]:[mm][m]:[ss][s][.f…]]`: each bracket optional, a field
/// that two brackets read twice taken when both read the same value (`2026-011-05` is
/// January 5th), a fraction of up to nine digits after a point that may stand alone,
/// resolved as [`TimestampParser::parse`] resolves (a 30th of February is the 28th, 24:00:00
/// the next midnight) but with no fallback: what does not read is `Null`.
pub fn parse_cast(s: &str) -> Parsed {
    let text: Vec<char> = s.chars().collect();
    match cast_fields(&text).and_then(|v| resolve(&v)) {
        Ok(ms) => in_range(ms),
        Err(Miss::Unfollowed(why)) => Parsed::Unfollowed(why),
        Err(Miss::Fails) => Parsed::Null,
    }
}

/// One optional number of the CAST formatter at `pos`: Java's `[MM]` (two digits) or `[M]`
/// (one or more), setting `slot` unless it holds another value; where it does not read,
/// nothing is read.
fn optional(
    text: &[char],
    pos: &mut usize,
    slot: &mut Option<i128>,
    two_digits: bool,
) -> Result<(), Miss> {
    let spec = if two_digits {
        (2, 2, Sign::NotNegative, 0)
    } else {
        (1, 19, Sign::Normal, 0)
    };
    match parse_number(text, *pos, spec) {
        Ok((v, end)) if slot.is_none_or(|old| old == v) => {
            *slot = Some(v);
            *pos = end;
            Ok(())
        }
        Ok(_) | Err(Miss::Fails) => Ok(()),
        Err(unfollowed) => Err(unfollowed),
    }
}

fn cast_fields(text: &[char]) -> Result<Values, Miss> {
    let mut v = Values::default();
    let (year, mut pos) = parse_number(text, 0, (4, 19, Sign::ExceedsPad, 0))?;
    v.year_of_era = Some(year);
    let literal = |pos: &mut usize, c: char| {
        if text.get(*pos) == Some(&c) {
            *pos += 1;
            true
        } else {
            false
        }
    };
    if !literal(&mut pos, '-') {
        return Err(Miss::Fails);
    }
    optional(text, &mut pos, &mut v.month, true)?;
    optional(text, &mut pos, &mut v.month, false)?;
    if !literal(&mut pos, '-') {
        return Err(Miss::Fails);
    }
    optional(text, &mut pos, &mut v.day, true)?;
    optional(text, &mut pos, &mut v.day, false)?;
    // The optional time: all of it, or none of it.
    let date_end = pos;
    let mut time = Values::default();
    let mut read_time = || -> Result<bool, Miss> {
        if !literal(&mut pos, ' ') {
            return Ok(false);
        }
        for (slot, last) in [
            (&mut time.hour, false),
            (&mut time.minute, false),
            (&mut time.second, true),
        ] {
            optional(text, &mut pos, slot, true)?;
            optional(text, &mut pos, slot, false)?;
            if !last && !literal(&mut pos, ':') {
                return Ok(false);
            }
        }
        if literal(&mut pos, '.') {
            let (f, end) = digits(text, pos, 9)?;
            if end > pos {
                let scale = 9 - u32::try_from(end - pos).unwrap_or(9);
                time.nanos = Some(f * 10_i128.pow(scale));
            }
            pos = end;
        }
        Ok(true)
    };
    if read_time()? {
        v.hour = time.hour;
        v.minute = time.minute;
        v.second = time.second;
        v.nanos = time.nanos;
    } else {
        pos = date_end;
    }
    if pos != text.len() {
        return Err(Miss::Fails);
    }
    Ok(v)
}

/// Java's `Integer.parseInt` of ASCII text: an optional sign and digits; `None` where it
/// throws.
fn parse_int(s: &str) -> Option<i128> {
    let digits = s.strip_prefix(['+', '-']).unwrap_or(s);
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    let v: i128 = digits.parse().ok()?;
    let v = if s.starts_with('-') { -v } else { v };
    (i128::from(i32::MIN)..=i128::from(i32::MAX))
        .contains(&v)
        .then_some(v)
}

/// Flink's fallback: `java.sql.Timestamp.valueOf` (with a space) or `java.sql.Date.valueOf`
/// of the trimmed string, fields added up as Java's lenient calendar does, read in UTC.
fn fallback(s: &str) -> Parsed {
    // Java's trim: every character up to U+0020 at both ends.
    let s = s.trim_matches(|c: char| c <= ' ');
    if s.chars().any(|c| !c.is_ascii() && c.is_numeric()) {
        return Parsed::Unfollowed(
            "a digit other than ASCII, which Java's fallback reading takes".into(),
        );
    }
    let lenient = match s.find(' ') {
        Some(space) => timestamp_value_of(&s[..space], &s[space + 1..]),
        None => date_value_of(s),
    };
    match lenient {
        None => Parsed::Null,
        // Java keeps them, and Flink then writes them.
        Some((_, _, below)) if below != 0 => {
            Parsed::Unfollowed("a fraction of the second below the millisecond".into())
        }
        Some((year, ms, _)) if year < 1600 || ms < days_from_civil(1600, 1, 1) * MS_PER_DAY => {
            Parsed::Unfollowed(
                "a date before 1600, which Java's fallback reads on the Julian calendar".into(),
            )
        }
        Some((_, ms, _)) => in_range(ms),
    }
}

/// The date of `yyyy-[m]m-[d]d` as `java.sql` reads it (the year four characters, the month
/// 1 to 12, the day 1 to 31): (year, the day's milliseconds, a 31st of a short month
/// running into the next).
fn lenient_date(date: &str) -> Option<(i128, i128)> {
    let first = date.find('-').filter(|&i| i > 0)?;
    let second = date[first + 1..].find('-').map(|i| i + first + 1)?;
    if second >= date.len() - 1 {
        return None;
    }
    let (y, m, d) = (
        &date[..first],
        &date[first + 1..second],
        &date[second + 1..],
    );
    if y.len() != 4 || !(1..=2).contains(&m.len()) || !(1..=2).contains(&d.len()) {
        return None;
    }
    let (y, m, d) = (parse_int(y)?, parse_int(m)?, parse_int(d)?);
    if !(1..=12).contains(&m) || !(1..=31).contains(&d) {
        return None;
    }
    Some((y, (days_from_civil(y, m, 1) + d - 1) * MS_PER_DAY))
}

/// `java.sql.Date.valueOf`: (year, milliseconds, nanoseconds below them).
fn date_value_of(s: &str) -> Option<(i128, i128, i128)> {
    lenient_date(s).map(|(y, ms)| (y, ms, 0))
}

/// `java.sql.Timestamp.valueOf` of a date and a time (`hh:mm:ss[.f…]`, each a Java int
/// added up leniently, the fraction 1 to 9 digits): (year, milliseconds, nanoseconds below
/// them).
fn timestamp_value_of(date: &str, time: &str) -> Option<(i128, i128, i128)> {
    let (year, day) = lenient_date(date)?;
    let first = time.find(':').filter(|&i| i > 0)?;
    let second = time[first + 1..].find(':').map(|i| i + first + 1)?;
    if second >= time.len() - 1 {
        return None;
    }
    let period = time[second + 1..].find('.').map(|i| i + second + 1);
    let h = parse_int(&time[..first])?;
    let mi = parse_int(&time[first + 1..second])?;
    let (sec, nanos) = match period {
        Some(p) if p < time.len() - 1 => {
            let frac = &time[p + 1..];
            if frac.len() > 9 || !frac.starts_with(|c: char| c.is_ascii_digit()) {
                return None;
            }
            let f = parse_int(frac)?;
            let scale = 9 - u32::try_from(frac.len()).ok()?;
            let nanos = f * 10_i128.pow(scale);
            (parse_int(&time[second + 1..p])?, nanos)
        }
        Some(_) => return None,
        None => (parse_int(&time[second + 1..])?, 0),
    };
    Some((
        year,
        day + ((h * 60 + mi) * 60 + sec) * 1000 + nanos / 1_000_000,
        nanos % 1_000_000,
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parser(pattern: &str) -> Result<TimestampParser, String> {
        super::super::read(pattern).and_then(|p| p.parser())
    }

    #[test]
    fn a_pattern_must_make_a_whole_date_or_a_time_from_the_hour() {
        for ok in [
            "yyyy-MM-dd",
            "HH",
            "HH:mm:ss.SSS",
            "dd/MM/yy HH:mm",
            "uuuuMMddHHmmss",
        ] {
            assert!(parser(ok).is_ok(), "{ok}");
        }
        for (bad, what) in [
            ("yyyy-MM", "part of a date"),
            ("MM-dd", "part of a date"),
            ("mm:ss", "part of a time"),
            ("HH:ss", "part of a time"),
            ("HH:mm.SSS", "part of a time"),
            ("yyyy-MM-dd DDD", "day of the year"),
            ("hh:mm", "12-hour clock"),
            ("yyyy-MM-dd uuuu", "the year twice"),
            ("'at'", "no date and no time"),
        ] {
            let err = parser(bad).unwrap_err();
            assert!(err.contains(what), "{bad}: {err}");
        }
    }

    #[test]
    fn adjacent_numbers_leave_the_fixed_widths_after_them_their_digits() {
        let p = parser("yyyyMMddHHmmss").unwrap();
        assert_eq!(
            p.parse("20260905070403"),
            Parsed::Time(crate::time::parse_rfc3339("2026-09-05T07:04:03Z").unwrap())
        );
        // Five digits of year before the reserved ten: Java asks for a sign past the width.
        assert_eq!(p.parse("120260905070403"), Parsed::Null);
        assert_eq!(
            parser("d/M/yyyy").unwrap().parse("5/9/2026"),
            Parsed::Time(crate::time::parse_rfc3339("2026-09-05T00:00:00Z").unwrap())
        );
    }
}
