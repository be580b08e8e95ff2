//! The regular expressions REGEXP, REGEXP_EXTRACT and REGEXP_REPLACE take (docs/sql.md,
//! "Regular expressions"): Flink compiles them with Java's `java.util.regex`, the simulator
//! with Rust's `regex`. The two agree on a common part of the syntax only, which is what a
//! pattern may use; this module reads a pattern with `regex-syntax`'s parser, refuses what
//! either engine reads differently, and writes the Rust pattern that matches as Java's does:
//!
//! - literals, `\t`, `\n`, `\r`, `\f`, `\xhh`, `\uhhhh`, `\x{h…}` and escaped punctuation;
//! - `.`: any character but Java's line terminators (`\n`, `\r`, `\u0085`, `\u2028`,
//!   `\u2029`), where Rust's leaves out `\n` only;
//! - `\d`, `\w`, `\s` and their negations, ASCII as in Java (`\s` includes `\x0B`), where
//!   Rust's are Unicode;
//! - bracketed classes of literals, ranges and those classes, negated or not;
//! - `*`, `+`, `?`, `{n}`, `{n,}`, `{n,m}`, greedy or lazy; groups, named groups (Java's
//!   names: a letter, then letters and digits) and `(?:…)`; alternation;
//! - `^` and `\A` (the start), `\z` (the end), and `$`, which in Java also matches before a
//!   line terminator that ends the string: the pattern then says so ([`JavaRegex::dollar`]),
//!   and the simulator refuses to run it on such a string rather than guess.
//!
//! Refused: flags (`(?i)`: Java's case folding is ASCII only), `\b` and `\B` (Java's word
//! boundary has changed between versions), Unicode classes (the Unicode versions differ),
//! POSIX classes, nested classes and class operators (`&&` in Java, `--` and `~~` literal
//! in Java), octal escapes, and everything `regex-syntax` does not read: back-references,
//! look-around, possessive quantifiers, `\Q…\E`, `\h`, `\R`, `\Z`, `\G`.

use std::fmt::Write as _;

use regex_syntax::ast::{
    self, AssertionKind, Ast, ClassPerlKind, ClassSet, ClassSetItem, GroupKind, HexLiteralKind,
    LiteralKind, RepetitionKind, RepetitionRange, SpecialLiteralKind,
};

/// A Java pattern the simulator matches exactly, written for Rust's `regex`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct JavaRegex {
    /// The pattern for Rust's `regex` crate.
    pub rust: String,
    /// Whether the pattern has a `$` (or `\Z`-like end) that Java also matches before a
    /// final line terminator.
    pub dollar: bool,
    /// Whether the pattern can match the empty string.
    pub matches_empty: bool,
}

/// Why a pattern is refused: what it uses, for a message (`the flag (?i)`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Refused(pub String);

/// The characters Java's `.` does not match, and that end a line for its `$`.
pub const LINE_TERMINATORS: [char; 5] = ['\n', '\r', '\u{85}', '\u{2028}', '\u{2029}'];

/// Reads the Java pattern `pattern` into the Rust pattern that matches the same strings the
/// same way.
///
/// # Errors
/// What the pattern uses that the two engines read differently, or that does not read.
pub fn translate(pattern: &str) -> Result<JavaRegex, Refused> {
    let parsed = ast::parse::Parser::new().parse(pattern).map_err(|e| {
        Refused(match e.kind() {
            ast::ErrorKind::UnsupportedBackreference
                if pattern[e.span().start.offset..].starts_with("\\0") =>
            {
                "an octal escape".to_string()
            }
            ast::ErrorKind::UnsupportedBackreference => "a back-reference".to_string(),
            ast::ErrorKind::UnsupportedLookAround => "look-around".to_string(),
            kind => format!(
                "syntax the simulator does not read ({kind}, at character {})",
                pattern[..e.span().start.offset.min(pattern.len())]
                    .chars()
                    .count()
                    + 1
            ),
        })
    })?;
    let mut out = Translation {
        pattern,
        rust: String::new(),
        dollar: false,
        times: 1,
    };
    out.ast(&parsed)?;
    let hir = regex_syntax::Parser::new()
        .parse(&out.rust)
        .map_err(|e| Refused(format!("the pattern does not read: {e}")))?;
    Ok(JavaRegex {
        matches_empty: hir.properties().minimum_len() == Some(0),
        rust: out.rust,
        dollar: out.dollar,
    })
}

struct Translation<'p> {
    pattern: &'p str,
    rust: String,
    dollar: bool,
    /// The product of the counted repetitions around the part being read.
    times: u64,
}

/// The most a pattern may repeat a part, counted repetitions multiplied through their
/// nesting: more would outgrow what the simulator's engine compiles.
const MOST_REPEATED: u64 = 10_000;

fn refuse<T>(what: impl Into<String>) -> Result<T, Refused> {
    Err(Refused(what.into()))
}

/// `c` as a literal of a Rust pattern, in a class or not.
fn literal(c: char) -> String {
    if c.is_ascii_alphanumeric() {
        c.to_string()
    } else {
        format!("\\x{{{:X}}}", u32::from(c))
    }
}

/// The ASCII class Java's `\d`, `\w` or `\s` stands for, without brackets.
fn perl(kind: &ClassPerlKind) -> &'static str {
    match kind {
        ClassPerlKind::Digit => "0-9",
        ClassPerlKind::Word => "0-9A-Za-z_",
        ClassPerlKind::Space => "\\t\\n\\x0B\\x0C\\r ",
    }
}

impl Translation<'_> {
    fn ast(&mut self, a: &Ast) -> Result<(), Refused> {
        match a {
            Ast::Empty(_) => {}
            Ast::Flags(f) => return refuse(format!("the flags `{}`", self.text(&f.span))),
            Ast::Literal(l) => {
                let c = self.literal(l)?;
                self.rust.push_str(&literal(c));
            }
            Ast::Dot(_) => {
                self.rust.push_str("[^");
                for c in LINE_TERMINATORS {
                    self.rust.push_str(&literal(c));
                }
                self.rust.push(']');
            }
            Ast::Assertion(assertion) => match &assertion.kind {
                AssertionKind::StartLine | AssertionKind::StartText => self.rust.push_str("\\A"),
                AssertionKind::EndText => self.rust.push_str("\\z"),
                AssertionKind::EndLine => {
                    self.dollar = true;
                    self.rust.push_str("\\z");
                }
                _ => return refuse(format!("the assertion `{}`", self.text(&assertion.span))),
            },
            Ast::ClassUnicode(c) => {
                return refuse(format!("the Unicode class `{}`", self.text(&c.span)));
            }
            Ast::ClassPerl(c) => {
                let _ = write!(
                    self.rust,
                    "[{}{}]",
                    if c.negated { "^" } else { "" },
                    perl(&c.kind)
                );
            }
            Ast::ClassBracketed(c) => {
                self.rust.push('[');
                if c.negated {
                    self.rust.push('^');
                }
                match &c.kind {
                    ClassSet::Item(item) => self.class_item(item)?,
                    ClassSet::BinaryOp(op) => {
                        return refuse(format!("the class operator in `{}`", self.text(&op.span)));
                    }
                }
                self.rust.push(']');
            }
            Ast::Repetition(r) => {
                if matches!(*r.ast, Ast::Repetition(_)) {
                    return refuse(format!(
                        "a repetition of a repetition, `{}`",
                        self.text(&r.span)
                    ));
                }
                let most = match &r.op.kind {
                    RepetitionKind::Range(
                        RepetitionRange::Exactly(n)
                        | RepetitionRange::AtLeast(n)
                        | RepetitionRange::Bounded(_, n),
                    ) => u64::from(*n).max(1),
                    _ => 1,
                };
                let outer = self.times;
                self.times = self.times.saturating_mul(most);
                if self.times > MOST_REPEATED {
                    return refuse(format!(
                        "a repetition of more than {MOST_REPEATED} in all, `{}`",
                        self.text(&r.span)
                    ));
                }
                self.rust.push_str("(?:");
                self.ast(&r.ast)?;
                self.rust.push(')');
                self.times = outer;
                match &r.op.kind {
                    RepetitionKind::ZeroOrOne => self.rust.push('?'),
                    RepetitionKind::ZeroOrMore => self.rust.push('*'),
                    RepetitionKind::OneOrMore => self.rust.push('+'),
                    RepetitionKind::Range(range) => {
                        // Java has no `{,n}`, and no space inside the braces.
                        let written = self.text(&r.op.span);
                        if written.starts_with("{,") || written.contains(char::is_whitespace) {
                            return refuse(format!("the repetition `{}`", self.text(&r.op.span)));
                        }
                        let _ = match range {
                            RepetitionRange::Exactly(n) => write!(self.rust, "{{{n}}}"),
                            RepetitionRange::AtLeast(n) => write!(self.rust, "{{{n},}}"),
                            RepetitionRange::Bounded(n, m) => write!(self.rust, "{{{n},{m}}}"),
                        };
                    }
                }
                if !r.greedy {
                    self.rust.push('?');
                }
            }
            Ast::Group(g) => {
                match &g.kind {
                    GroupKind::CaptureIndex(_) => self.rust.push('('),
                    GroupKind::CaptureName {
                        starts_with_p: true,
                        ..
                    } => {
                        return refuse("the group syntax `(?P<…>`, which Java does not have");
                    }
                    GroupKind::CaptureName { name, .. } => {
                        let mut chars = name.name.chars();
                        let java = chars.next().is_some_and(|c| c.is_ascii_alphabetic())
                            && chars.all(|c| c.is_ascii_alphanumeric());
                        if !java {
                            return refuse(format!(
                                "the group name `{}` (Java's names are a letter, then letters and digits)",
                                name.name
                            ));
                        }
                        let _ = write!(self.rust, "(?P<{}>", name.name);
                    }
                    GroupKind::NonCapturing(flags) => {
                        if !flags.items.is_empty() {
                            return refuse(format!("the flags `{}`", self.text(&flags.span)));
                        }
                        self.rust.push_str("(?:");
                    }
                }
                self.ast(&g.ast)?;
                self.rust.push(')');
            }
            Ast::Alternation(alt) => {
                self.rust.push_str("(?:");
                for (i, branch) in alt.asts.iter().enumerate() {
                    if i > 0 {
                        self.rust.push('|');
                    }
                    self.ast(branch)?;
                }
                self.rust.push(')');
            }
            Ast::Concat(c) => {
                for part in &c.asts {
                    self.ast(part)?;
                }
            }
        }
        Ok(())
    }

    /// One item of a bracketed class.
    fn class_item(&mut self, item: &ClassSetItem) -> Result<(), Refused> {
        match item {
            ClassSetItem::Empty(_) => {}
            ClassSetItem::Literal(l) => {
                let c = self.literal(l)?;
                // Java reads an unescaped `[` in a class as a nested class (`&&`, an
                // intersection, is a class operator here too, refused above).
                if l.kind == LiteralKind::Verbatim && matches!(c, '[' | ']') {
                    return refuse(format!("an unescaped `{c}` in a class"));
                }
                self.rust.push_str(&literal(c));
            }
            ClassSetItem::Range(r) => {
                let (start, end) = (self.literal(&r.start)?, self.literal(&r.end)?);
                let _ = write!(self.rust, "{}-{}", literal(start), literal(end));
            }
            ClassSetItem::Perl(p) if !p.negated => self.rust.push_str(perl(&p.kind)),
            ClassSetItem::Perl(p) => {
                return refuse(format!(
                    "the negated class `{}` in a class",
                    self.text(&p.span)
                ));
            }
            ClassSetItem::Ascii(c) => {
                return refuse(format!("the POSIX class `{}`", self.text(&c.span)));
            }
            ClassSetItem::Unicode(c) => {
                return refuse(format!("the Unicode class `{}`", self.text(&c.span)));
            }
            ClassSetItem::Bracketed(c) => {
                return refuse(format!("the nested class `{}`", self.text(&c.span)));
            }
            ClassSetItem::Union(u) => {
                for item in &u.items {
                    self.class_item(item)?;
                }
            }
        }
        Ok(())
    }

    /// The character a literal stands for, when Java reads it the same.
    fn literal(&self, l: &ast::Literal) -> Result<char, Refused> {
        match &l.kind {
            // Java writes `\xhh`, `\uhhhh` and `\x{h…}`, not `\U…` nor `\u{…}`.
            LiteralKind::Verbatim
            | LiteralKind::Meta
            | LiteralKind::Superfluous
            | LiteralKind::HexFixed(HexLiteralKind::X | HexLiteralKind::UnicodeShort)
            | LiteralKind::HexBrace(HexLiteralKind::X) => Ok(l.c),
            LiteralKind::Special(
                SpecialLiteralKind::Tab
                | SpecialLiteralKind::LineFeed
                | SpecialLiteralKind::CarriageReturn
                | SpecialLiteralKind::FormFeed,
            ) => Ok(l.c),
            _ => refuse(format!("the escape `{}`", self.text(&l.span))),
        }
    }

    fn text(&self, span: &ast::Span) -> &str {
        self.pattern
            .get(span.start.offset..span.end.offset)
            .unwrap_or_default()
    }
}

/// Whether Java's `$` could match at another place than Rust's end of the string in `s`:
/// when `s` ends with a line terminator.
pub fn ends_with_line_terminator(s: &str) -> bool {
    s.ends_with(LINE_TERMINATORS)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rust(p: &str) -> String {
        translate(p).unwrap().rust
    }

    #[test]
    fn the_common_part_is_written_for_rust_with_javas_meaning() {
        assert_eq!(rust("ab"), "ab");
        assert_eq!(rust(r"\d+"), "(?:[0-9])+");
        assert_eq!(rust(r"a.b"), r"a[^\x{A}\x{D}\x{85}\x{2028}\x{2029}]b");
        assert_eq!(
            rust(r"^(\w+)@x\.com$"),
            r"\A((?:[0-9A-Za-z_])+)\x{40}x\x{2E}com\z"
        );
        assert_eq!(rust("[^a-c]*?"), "(?:[^a-c])*?");
        assert_eq!(rust("[?&]x"), r"[\x{3F}\x{26}]x");
        assert_eq!(rust("a{2,3}|b"), "(?:(?:a){2,3}|b)");
        assert_eq!(rust("(?<year>[0-9]{4})"), "(?P<year>(?:[0-9]){4})");
        assert!(translate("a$").unwrap().dollar);
        assert!(!translate("a").unwrap().dollar);
        assert!(translate("a*").unwrap().matches_empty);
        assert!(!translate("a+").unwrap().matches_empty);
    }

    #[test]
    fn what_java_reads_otherwise_is_refused() {
        for p in [
            "(?i)a",
            r"\bword\b",
            r"\p{L}",
            "[[:alpha:]]",
            "[a[b]]",
            "[a&&b]",
            r"(a)\1",
            "(?=a)",
            "a*+",
            r"\Qa\E",
            r"\0101",
            "a{,3}",
            "(?<my_name>a)",
            r"\v",
            "[a-z&&[^m]]",
            "a{1, 2}",
            "a{ 2 }",
            r"\u{41}",
            r"\U00000041",
            "(?P<n>b)",
            "(a{1000}){1000}",
        ] {
            assert!(translate(p).is_err(), "{p}");
        }
    }

    #[test]
    fn a_translated_pattern_matches_as_java_does() {
        let re = |p: &str| regex::Regex::new(&rust(p)).unwrap();
        assert!(re(r"\d").is_match("7"));
        assert!(!re(r"\d").is_match("٣"), "Java's \\d is ASCII");
        assert!(!re("a.b").is_match("a\rb"), "Java's . leaves out \\r");
        assert!(
            re(r"\s").is_match("\u{B}"),
            "Java's \\s has the vertical tab"
        );
        assert!(!re(r"\w").is_match("é"), "Java's \\w is ASCII");
    }
}
