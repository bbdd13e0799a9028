//! Coverage waivers: the RTL lines and cover points no test reaches, each
//! with the reason (`sim/coverage/waivers`, docs/coverage.md).
//!
//! One waiver per line, `#` starts a comment:
//!
//! ```text
//! rtl/gsi_rx_check.sv:121-124 | if (grh) begin | a GRH never reaches QP1 here
//! cover smi_rq C14_9_4_rx | a CA is never the last hop of a return path
//! ```
//!
//! A line waiver names a file, a line or an inclusive range, the text its
//! first line contains (so that a waiver cannot drift onto another line when
//! the file changes: [`Waivers::check_sources`]), and the reason. It waives
//! every line, branch and condition point of those lines that no run
//! reached. A cover waiver names a cover point (rule or FSM) by module and
//! name. Points that a run did reach are never waived: they count as hit.

use std::path::Path;

use crate::proto::InputError;

/// What one waiver covers.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Target {
    /// Lines `first..=last` of `file`, whose line `first` contains `text`.
    Lines {
        file: String,
        first: u32,
        last: u32,
        text: String,
    },
    /// A cover point by module and name.
    Cover { module: String, name: String },
}

/// One waiver and where it was written.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Waiver {
    pub target: Target,
    pub reason: String,
    /// `file:line` of the waiver itself.
    pub at: String,
}

impl Waiver {
    /// Whether this waiver covers a point of `file` at `line`, or the cover
    /// point `name` of `module` (`cover` true).
    pub fn covers(&self, file: &str, line: u32, module: &str, name: &str, cover: bool) -> bool {
        match &self.target {
            Target::Lines {
                file: f,
                first,
                last,
                ..
            } => !cover && f == file && (*first..=*last).contains(&line),
            Target::Cover { module: m, name: n } => cover && m == module && n == name,
        }
    }
}

/// Every waiver of one file.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Waivers(pub Vec<Waiver>);

impl Waivers {
    /// Parse a waiver file's text; `origin` names it in errors.
    pub fn parse(text: &str, origin: &Path) -> Result<Waivers, InputError> {
        let mut v = Vec::new();
        for (i, raw) in text.lines().enumerate() {
            let at = format!("{}:{}", origin.display(), i + 1);
            let l = raw.trim();
            if l.is_empty() || l.starts_with('#') {
                continue;
            }
            let err = |m: &str| InputError(format!("{at}: {m}"));
            let fields: Vec<&str> = l.split('|').map(str::trim).collect();
            let (target, reason) = if let Some(rest) = fields[0].strip_prefix("cover ") {
                let [_, reason] = fields[..] else {
                    return Err(err("expected `cover <module> <name> | <reason>`"));
                };
                let mut w = rest.split_whitespace();
                let (Some(module), Some(name), None) = (w.next(), w.next(), w.next()) else {
                    return Err(err("expected `cover <module> <name> | <reason>`"));
                };
                let t = Target::Cover {
                    module: module.to_string(),
                    name: name.to_string(),
                };
                (t, reason)
            } else {
                let [place, text, reason] = fields[..] else {
                    return Err(err(
                        "expected `<file>:<line>[-<line>] | <text of the line> | <reason>`",
                    ));
                };
                let (file, lines) = place
                    .rsplit_once(':')
                    .ok_or_else(|| err(&format!("{place:?}: no `:<line>`")))?;
                let num = |s: &str| -> Result<u32, InputError> {
                    s.parse::<u32>()
                        .ok()
                        .filter(|&n| n > 0)
                        .ok_or_else(|| err(&format!("{s:?} is not a line number")))
                };
                let (first, last) = match lines.split_once('-') {
                    Some((a, b)) => (num(a)?, num(b)?),
                    None => (num(lines)?, num(lines)?),
                };
                if last < first {
                    return Err(err(&format!("the range {first}-{last} runs backwards")));
                }
                if text.is_empty() {
                    return Err(err("the text of the line is empty"));
                }
                let t = Target::Lines {
                    file: file.to_string(),
                    first,
                    last,
                    text: text.to_string(),
                };
                (t, reason)
            };
            if reason.is_empty() {
                return Err(err("a waiver needs its reason"));
            }
            v.push(Waiver {
                target,
                reason: reason.to_string(),
                at,
            });
        }
        Ok(Waivers(v))
    }

    /// Read and parse a waiver file.
    pub fn read(p: &Path) -> anyhow::Result<Waivers> {
        use anyhow::Context as _;
        let text =
            std::fs::read_to_string(p).with_context(|| format!("reading {}", p.display()))?;
        Ok(Waivers::parse(&text, p)?)
    }

    /// Check every line waiver against the sources under `root`: its file
    /// exists, has its lines, and its first line still contains its text.
    pub fn check_sources(&self, root: &Path) -> Result<(), InputError> {
        for w in &self.0 {
            let Target::Lines {
                file,
                first,
                last,
                text,
            } = &w.target
            else {
                continue;
            };
            let src = std::fs::read_to_string(root.join(file))
                .map_err(|e| InputError(format!("{}: {file}: {e}", w.at)))?;
            let lines: Vec<&str> = src.lines().collect();
            if *last as usize > lines.len() {
                return Err(InputError(format!(
                    "{}: {file} has {} lines, not {last}",
                    w.at,
                    lines.len()
                )));
            }
            let got = lines[*first as usize - 1];
            if !got.contains(text.as_str()) {
                return Err(InputError(format!(
                    "{}: {file}:{first} reads {:?}, not {text:?}: the file changed, move the waiver",
                    w.at,
                    got.trim()
                )));
            }
        }
        Ok(())
    }

    /// The first waiver that covers a point (see [`Waiver::covers`]).
    pub fn find(
        &self,
        file: &str,
        line: u32,
        module: &str,
        name: &str,
        cover: bool,
    ) -> Option<usize> {
        self.0
            .iter()
            .position(|w| w.covers(file, line, module, name, cover))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_line_and_cover_waivers() {
        let w = Waivers::parse(
            "# comment\n\nrtl/a.sv:3-5 | if (x) | never with x\ncover m C14_6_rx | no DR here\nrtl/b.sv:7 | y = 1; | z\n",
            Path::new("w"),
        )
        .unwrap();
        assert_eq!(w.0.len(), 3);
        assert_eq!(
            w.0[0].target,
            Target::Lines {
                file: "rtl/a.sv".into(),
                first: 3,
                last: 5,
                text: "if (x)".into()
            }
        );
        assert_eq!(w.0[0].at, "w:3");
        assert_eq!(w.find("rtl/a.sv", 5, "a", "if", false), Some(0));
        assert_eq!(w.find("rtl/a.sv", 6, "a", "if", false), None);
        assert_eq!(w.find("rtl/x.sv", 1, "m", "C14_6_rx", true), Some(1));
        // a line waiver never waives a cover point, nor a cover waiver a line
        assert_eq!(w.find("rtl/a.sv", 4, "m", "C14_6_rx", true), Some(1));
        assert_eq!(w.find("rtl/a.sv", 4, "m", "other", true), None);
        assert_eq!(w.find("rtl/b.sv", 7, "b", "", false), Some(2));
    }

    #[test]
    fn bad_waivers_name_file_and_line() {
        for (text, want) in [
            ("rtl/a.sv:3 | x\n", "w:1: expected `<file>"),
            ("rtl/a.sv | x | y\n", "no `:<line>`"),
            ("rtl/a.sv:0 | x | y\n", "\"0\" is not a line number"),
            ("rtl/a.sv:5-3 | x | y\n", "runs backwards"),
            ("rtl/a.sv:5 |  | y\n", "text of the line is empty"),
            ("rtl/a.sv:5 | x |\n", "needs its reason"),
            ("\ncover m | y\n", "w:2: expected `cover"),
            ("cover m n\n", "expected `cover"),
        ] {
            let e = Waivers::parse(text, Path::new("w")).unwrap_err().0;
            assert!(e.contains(want), "{text:?}: {e}");
        }
    }

    #[test]
    fn a_waiver_whose_line_moved_is_an_error() {
        let d = std::env::temp_dir().join(format!("vl15-waivers-{}", std::process::id()));
        std::fs::create_dir_all(d.join("rtl")).unwrap();
        std::fs::write(
            d.join("rtl/a.sv"),
            "module a;\n  if (x) y = 1;\nendmodule\n",
        )
        .unwrap();
        let ok = Waivers::parse("rtl/a.sv:2 | if (x) | r\n", Path::new("w")).unwrap();
        assert!(ok.check_sources(&d).is_ok());
        let moved = Waivers::parse("rtl/a.sv:1 | if (x) | r\n", Path::new("w")).unwrap();
        let e = moved.check_sources(&d).unwrap_err().0;
        assert!(e.contains("w:1: rtl/a.sv:1 reads \"module a;\""), "{e}");
        let long = Waivers::parse("rtl/a.sv:2-9 | if (x) | r\n", Path::new("w")).unwrap();
        assert!(long
            .check_sources(&d)
            .unwrap_err()
            .0
            .contains("has 3 lines"));
        let gone = Waivers::parse("rtl/b.sv:2 | if (x) | r\n", Path::new("w")).unwrap();
        assert!(gone.check_sources(&d).unwrap_err().0.contains("rtl/b.sv"));
        std::fs::remove_dir_all(&d).unwrap();
    }
}
