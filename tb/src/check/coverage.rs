//! Coverage of the RTL: Verilator's coverage data files read, merged and
//! reported.
//!
//! A coverage build of a model (`--coverage-line`, `-expr`, `-toggle`,
//! `-fsm`, `-user`) counts, per instance, every line block, branch arm,
//! expression term, signal toggle, FSM state and arc and SV `cover property`
//! it reaches, and writes them as a "SystemC::Coverage-3" file (one `C
//! '<keys>' <count>` line per point; each key is `\x01<name>\x02<value>`:
//! `f` file, `l` line, `n` column, `t` type, `page` `v_<type>/<module>`, `o`
//! what it is, `h` the instance). The regression writes one file per model
//! it ran ([`read_dir`]); they are merged per module, across instances and
//! parameterisations (a point counts as hit when any run hit it anywhere),
//! into totals per module ([`Summary`]), the lcov trace `genhtml` renders
//! ([`Merged::lcov`]) and the list of cover points with the run that hit each
//! first ([`Merged::cover_points`]).

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use anyhow::{Context, Result};

use crate::check::waivers::Waivers;
use crate::proto::InputError;

/// What a coverage point measures (`t=`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Kind {
    /// A block of statements (`t=line`).
    Line,
    /// One arm of an `if` or `case` (`t=branch`).
    Branch,
    /// One term of a condition (`t=expr`).
    Expr,
    /// A bit going 0→1 or 1→0 (`t=toggle`).
    Toggle,
    FsmState,
    FsmArc,
    /// An SV `cover property` (`t=user`).
    User,
}

impl Kind {
    fn parse(s: &str) -> Option<Kind> {
        Some(match s {
            "line" | "block" => Kind::Line,
            "branch" => Kind::Branch,
            "expr" => Kind::Expr,
            "toggle" => Kind::Toggle,
            "fsm_state" => Kind::FsmState,
            "fsm_arc" => Kind::FsmArc,
            "user" => Kind::User,
            _ => return None,
        })
    }
}

/// One point of one file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Point {
    /// The source file as the model was built from it.
    pub file: String,
    pub line: u32,
    pub col: u32,
    pub kind: Kind,
    /// The module (from `page`).
    pub module: String,
    /// What the point is: `if`, `a_i[0]:0->1`, a cover property's name …
    pub what: String,
    /// The instance.
    pub hier: String,
    pub count: u64,
}

/// The name prefix of a cover property that marks an FSM state. Verilator
/// 5.048's own FSM coverage (`--coverage-fsm`) stops with an internal error
/// on this RTL, so each FSM lists its states and arcs as cover properties.
pub const FSM_STATE: &str = "FSM_S_";
/// The name prefix of a cover property that marks an FSM arc.
pub const FSM_ARC: &str = "FSM_A_";

/// Split one `C '<keys>' <count>` line.
fn parse_line(l: &str) -> Result<Option<Point>, String> {
    let l = l.trim_end_matches(['\r', '\n']);
    if l.is_empty() || l.starts_with('#') {
        return Ok(None);
    }
    let rest = l
        .strip_prefix("C '")
        .ok_or("a point line starts with C '")?;
    let end = rest.rfind("' ").ok_or("no ' before the count")?;
    let (keys, count) = (&rest[..end], rest[end + 2..].trim());
    let count: u64 = count
        .parse()
        .map_err(|_| format!("count {count:?} is not a number"))?;
    let mut kv: BTreeMap<&str, &str> = BTreeMap::new();
    for pair in keys.split('\x01').filter(|p| !p.is_empty()) {
        let (k, v) = pair
            .split_once('\x02')
            .ok_or_else(|| format!("key {pair:?} has no value"))?;
        kv.insert(k, v);
    }
    let get = |k: &str| kv.get(k).copied().unwrap_or("");
    let Some(mut kind) = Kind::parse(get("t")) else {
        // A point of a type this report does not count (none today).
        return Ok(None);
    };
    // The FSMs' own cover points (`FSM_S_<state>`, `FSM_A_<from>_<to>`)
    // count as FSM states and arcs, not as rules.
    if kind == Kind::User {
        if get("o").starts_with(FSM_STATE) {
            kind = Kind::FsmState;
        } else if get("o").starts_with(FSM_ARC) {
            kind = Kind::FsmArc;
        }
    }
    let num = |k: &str| -> Result<u32, String> {
        let v = get(k);
        if v.is_empty() {
            return Ok(0);
        }
        v.parse().map_err(|_| format!("{k}={v:?} is not a number"))
    };
    // `v_line/smi_rq__D20`: a parameterised module carries its parameters
    // after `__` (Verilator's naming); the module is the name before them.
    let module = get("page")
        .split_once('/')
        .map(|(_, m)| m.split("__").next().unwrap_or(m).to_string())
        .unwrap_or_default();
    Ok(Some(Point {
        file: get("f").to_string(),
        line: num("l")?,
        col: num("n")?,
        kind,
        module,
        what: get("o").to_string(),
        hier: get("h").to_string(),
        count,
    }))
}

/// Every point of one coverage file's text; `origin` names it in errors.
pub fn parse(text: &str, origin: &Path) -> Result<Vec<Point>, InputError> {
    let mut v = Vec::new();
    let mut header = false;
    for (i, l) in text.lines().enumerate() {
        if i == 0 {
            header = l.starts_with("# SystemC::Coverage-");
            if !header {
                return Err(InputError(format!(
                    "{}:1: not a Verilator coverage file (no \"# SystemC::Coverage-\" header)",
                    origin.display()
                )));
            }
            continue;
        }
        match parse_line(l) {
            Ok(Some(p)) => v.push(p),
            Ok(None) => {}
            Err(e) => {
                return Err(InputError(format!("{}:{}: {e}", origin.display(), i + 1)));
            }
        }
    }
    if !header {
        return Err(InputError(format!("{}: empty", origin.display())));
    }
    Ok(v)
}

/// The coverage files under `dir` (any depth), in path order: the order in
/// which "the run that hits it first" is decided.
pub fn read_dir(dir: &Path) -> Result<Vec<PathBuf>> {
    let mut out = Vec::new();
    let mut todo = vec![dir.to_path_buf()];
    while let Some(d) = todo.pop() {
        let rd = std::fs::read_dir(&d).with_context(|| format!("reading {}", d.display()))?;
        for e in rd {
            let p = e
                .with_context(|| format!("reading {}", d.display()))?
                .path();
            if p.is_dir() {
                todo.push(p);
            } else if p.extension().is_some_and(|x| x == "dat") {
                out.push(p);
            }
        }
    }
    out.sort();
    Ok(out)
}

/// A point merged over every file: identity without the instance.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Key {
    pub file: String,
    pub line: u32,
    pub col: u32,
    pub kind: Kind,
    pub what: String,
    pub module: String,
}

/// Counts summed over every instance and run, and the first run that hit
/// the point.
#[derive(Debug, Clone, Default)]
pub struct Tally {
    pub count: u64,
    pub first: Option<String>,
    /// The waiver (its index) that waives this point, when no run hit it.
    pub waived: Option<usize>,
}

/// Hit and total of one metric.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, serde::Serialize)]
pub struct Frac {
    pub hit: u64,
    pub total: u64,
    /// Of the points not hit, those a waiver explains: they leave the
    /// percentage's denominator.
    pub waived: u64,
}

impl Frac {
    fn add(&mut self, hit: bool, waived: bool) {
        self.total += 1;
        self.hit += u64::from(hit);
        self.waived += u64::from(!hit && waived);
    }
    /// Percent of the points not waived, or None with nothing to count.
    pub fn pct(&self) -> Option<f64> {
        let n = self.total - self.waived;
        (n > 0).then(|| 100.0 * self.hit as f64 / n as f64)
    }
    /// Percent of every point, waived or not.
    pub fn raw_pct(&self) -> Option<f64> {
        (self.total > 0).then(|| 100.0 * self.hit as f64 / self.total as f64)
    }
}

/// The totals of one module (or of all).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Summary {
    pub line: Frac,
    /// Branch arms and condition terms together.
    pub branch: Frac,
    pub toggle: Frac,
    pub fsm_states: Frac,
    pub fsm_arcs: Frac,
    /// SV cover properties: the rules' cover points.
    pub rules: Frac,
}

impl Summary {
    fn add(&mut self, kind: Kind, hit: bool, waived: bool) {
        match kind {
            Kind::Line => self.line.add(hit, waived),
            Kind::Branch | Kind::Expr => self.branch.add(hit, waived),
            Kind::Toggle => self.toggle.add(hit, waived),
            Kind::FsmState => self.fsm_states.add(hit, waived),
            Kind::FsmArc => self.fsm_arcs.add(hit, waived),
            Kind::User => self.rules.add(hit, waived),
        }
    }

    fn json(&self) -> serde_json::Value {
        let p = |f: &Frac| f.pct().map(|x| (x * 100.0).round() / 100.0);
        serde_json::json!({
            "line": p(&self.line),
            "branch": p(&self.branch),
            "toggle": p(&self.toggle),
            "fsm_states": p(&self.fsm_states),
            "fsm_arcs": p(&self.fsm_arcs),
            "rules": { "hit": self.rules.hit, "total": self.rules.total },
            "waived": {
                "line": self.line.waived,
                "branch": self.branch.waived,
                "fsm_states": self.fsm_states.waived,
                "fsm_arcs": self.fsm_arcs.waived,
                "rules": self.rules.waived,
            },
        })
    }
}

/// Every file's points merged.
#[derive(Debug, Default)]
pub struct Merged {
    pub points: BTreeMap<Key, Tally>,
    /// Files read, in order.
    pub files: Vec<PathBuf>,
}

impl Merged {
    /// Merge one point's tally: counts add up, the earlier first run stays.
    fn absorb(&mut self, key: Key, t: Tally) {
        let e = self.points.entry(key).or_default();
        e.count = e.count.saturating_add(t.count);
        if e.first.is_none() {
            e.first = t.first;
        }
        e.waived = e.waived.or(t.waived);
    }

    /// Merge the points of one file, which names its run as `run`.
    pub fn add(&mut self, run: &str, points: Vec<Point>) {
        for p in points {
            let key = Key {
                file: p.file,
                line: p.line,
                col: p.col,
                kind: p.kind,
                what: p.what,
                module: p.module,
            };
            let first = (p.count > 0).then(|| run.to_string());
            self.absorb(
                key,
                Tally {
                    count: p.count,
                    first,
                    waived: None,
                },
            );
        }
    }

    /// Read and merge one coverage file; its run is its path below `base`
    /// without the extension. Files are merged in the order they are read.
    pub fn read_file(&mut self, f: &Path, base: &Path) -> Result<()> {
        let text =
            std::fs::read_to_string(f).with_context(|| format!("reading {}", f.display()))?;
        let points = parse(&text, f)?;
        let run = f.strip_prefix(base).unwrap_or(f).with_extension("");
        self.add(&run.display().to_string(), points);
        self.files.push(f.to_path_buf());
        Ok(())
    }

    /// Rewrite every source path to be relative to `root` (the models are
    /// built from absolute paths).
    pub fn relative_to(&mut self, root: &Path) {
        let root = format!("{}/", root.display());
        for (mut k, t) in std::mem::take(&mut self.points) {
            if let Some(r) = k.file.strip_prefix(&root) {
                k.file = r.to_string();
            }
            self.absorb(k, t);
        }
    }

    /// Mark every point no run hit that one of `w` explains (toggles are
    /// never waived); returns how many points each waiver waives.
    pub fn waive(&mut self, w: &Waivers) -> Vec<u64> {
        let mut n = vec![0; w.0.len()];
        for (k, t) in self.points.iter_mut() {
            t.waived = None;
            if t.count > 0 || k.kind == Kind::Toggle {
                continue;
            }
            let cover = matches!(k.kind, Kind::User | Kind::FsmState | Kind::FsmArc);
            if let Some(i) = w.find(&k.file, k.line, &k.module, &k.what, cover) {
                t.waived = Some(i);
                n[i] += 1;
            }
        }
        n
    }

    /// Totals per module, for the points whose file `keep` accepts.
    pub fn summary(&self, keep: impl Fn(&str) -> bool) -> BTreeMap<String, Summary> {
        let mut m: BTreeMap<String, Summary> = BTreeMap::new();
        for (k, t) in self.points.iter().filter(|(k, _)| keep(&k.file)) {
            m.entry(k.module.clone())
                .or_default()
                .add(k.kind, t.count > 0, t.waived.is_some());
        }
        m
    }

    /// The SV cover points, rules' and FSMs': (module, name, hits, first
    /// run), by name.
    pub fn cover_points(&self) -> Vec<(String, String, u64, Option<String>)> {
        let mut by: BTreeMap<(String, String), (u64, Option<String>)> = BTreeMap::new();
        let cover = |k: &Kind| matches!(k, Kind::User | Kind::FsmState | Kind::FsmArc);
        for (k, t) in self.points.iter().filter(|(k, _)| cover(&k.kind)) {
            let e = by.entry((k.what.clone(), k.module.clone())).or_default();
            e.0 = e.0.saturating_add(t.count);
            if e.1.is_none() {
                e.1 = t.first.clone();
            }
        }
        by.into_iter()
            .map(|((name, module), (n, first))| (module, name, n, first))
            .collect()
    }

    /// The lcov trace of the line and branch points of the files `keep`
    /// accepts, without the waived ones: per line the hits of its blocks, per branch arm or
    /// condition term its hits.
    pub fn lcov(&self, keep: impl Fn(&str) -> bool) -> String {
        // file → line → (block hits, [arm hits])
        type Lines = BTreeMap<u32, (Option<u64>, Vec<u64>)>;
        let mut files: BTreeMap<&str, Lines> = BTreeMap::new();
        let keep = |(k, t): &(&Key, &Tally)| keep(&k.file) && t.waived.is_none();
        for (k, t) in self.points.iter().filter(keep) {
            let l = files.entry(&k.file).or_default().entry(k.line).or_default();
            match k.kind {
                Kind::Line => l.0 = Some(l.0.unwrap_or(0).saturating_add(t.count)),
                Kind::Branch | Kind::Expr => l.1.push(t.count),
                _ => {}
            }
        }
        let mut s = String::new();
        for (f, lines) in files {
            let _ = writeln!(s, "TN:\nSF:{f}");
            let (mut lf, mut lh, mut brf, mut brh) = (0, 0, 0, 0);
            for (n, (block, arms)) in &lines {
                for (i, c) in arms.iter().enumerate() {
                    let taken = if *c > 0 { c.to_string() } else { "0".into() };
                    let _ = writeln!(s, "BRDA:{n},0,{i},{taken}");
                    brf += 1;
                    brh += u32::from(*c > 0);
                }
                if let Some(c) = block {
                    let _ = writeln!(s, "DA:{n},{c}");
                    lf += 1;
                    lh += u32::from(*c > 0);
                }
            }
            let _ = writeln!(s, "LF:{lf}\nLH:{lh}\nBRF:{brf}\nBRH:{brh}\nend_of_record");
        }
        s
    }
}

/// `summary.json`: per module and `total`.
pub fn summary_json(modules: &BTreeMap<String, Summary>, total: &Summary) -> serde_json::Value {
    let mut m = serde_json::Map::new();
    for (name, s) in modules {
        m.insert(name.clone(), s.json());
    }
    m.insert("total".to_string(), total.json());
    serde_json::Value::Object(m)
}

/// The sum of per-module totals.
pub fn total(modules: &BTreeMap<String, Summary>) -> Summary {
    let mut t = Summary::default();
    for s in modules.values() {
        for (a, b) in [
            (&mut t.line, &s.line),
            (&mut t.branch, &s.branch),
            (&mut t.toggle, &s.toggle),
            (&mut t.fsm_states, &s.fsm_states),
            (&mut t.fsm_arcs, &s.fsm_arcs),
            (&mut t.rules, &s.rules),
        ] {
            a.hit += b.hit;
            a.total += b.total;
            a.waived += b.waived;
        }
    }
    t
}

/// The table `make coverage` prints: one row per module, then the total.
pub fn table(modules: &BTreeMap<String, Summary>, total: &Summary) -> String {
    let pct = |f: &Frac| f.pct().map_or("-".to_string(), |p| format!("{p:.1}"));
    let mut s = String::new();
    let _ = writeln!(
        s,
        "{:<22} {:>7} {:>7} {:>7} {:>7} {:>7} {:>9}",
        "module", "line%", "branch%", "toggle%", "fsm_st%", "fsm_arc%", "rules"
    );
    let row = |s: &mut String, name: &str, m: &Summary| {
        let _ = writeln!(
            s,
            "{:<22} {:>7} {:>7} {:>7} {:>7} {:>7} {:>9}",
            name,
            pct(&m.line),
            pct(&m.branch),
            pct(&m.toggle),
            pct(&m.fsm_states),
            pct(&m.fsm_arcs),
            format!("{}/{}", m.rules.hit, m.rules.total)
        );
    };
    for (name, m) in modules {
        row(&mut s, name, m);
    }
    row(&mut s, "total", total);
    let (l, b) = (&total.line, &total.branch);
    if l.waived + b.waived + total.rules.waived + total.fsm_states.waived + total.fsm_arcs.waived
        > 0
    {
        let raw = |f: &Frac| f.raw_pct().map_or("-".to_string(), |p| format!("{p:.1}"));
        let _ = writeln!(
            s,
            "waived (not in the percentages above): {} line, {} branch, {} FSM and {} rule points; without waivers line {} %, branch {} %",
            l.waived,
            b.waived,
            total.fsm_states.waived + total.fsm_arcs.waived,
            total.rules.waived,
            raw(l),
            raw(b)
        );
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Points as a Verilator 5.048 coverage build of a two-state machine
    /// with one cover property wrote them (keys as Verilator orders them).
    fn sample(count_if: u64, count_user: u64) -> String {
        let k = |kv: &[(&str, &str)]| -> String {
            kv.iter().map(|(a, b)| format!("\x01{a}\x02{b}")).collect()
        };
        let mut s = String::from("# SystemC::Coverage-3\n");
        for (kv, n) in [
            (
                k(&[
                    ("f", "/r/rtl/t.sv"),
                    ("l", "5"),
                    ("n", "5"),
                    ("t", "branch"),
                    ("page", "v_branch/t"),
                    ("o", "if"),
                    ("S", "5"),
                    ("h", "TOP.t"),
                ]),
                count_if,
            ),
            (
                k(&[
                    ("f", "/r/rtl/t.sv"),
                    ("l", "5"),
                    ("n", "6"),
                    ("t", "branch"),
                    ("page", "v_branch/t__D20"),
                    ("o", "else"),
                    ("S", "6-7"),
                    ("h", "TOP.t"),
                ]),
                6,
            ),
            (
                k(&[
                    ("f", "/r/rtl/t.sv"),
                    ("l", "4"),
                    ("n", "3"),
                    ("t", "line"),
                    ("page", "v_line/t"),
                    ("o", "block"),
                    ("S", "4"),
                    ("h", "TOP.t"),
                ]),
                7,
            ),
            (
                k(&[
                    ("f", "/r/rtl/t.sv"),
                    ("l", "1"),
                    ("n", "22"),
                    ("t", "toggle"),
                    ("page", "v_toggle/t"),
                    ("o", "clk_i:0->1"),
                    ("h", "TOP.t"),
                ]),
                7,
            ),
            (
                k(&[
                    ("f", "/r/rtl/t.sv"),
                    ("l", "16"),
                    ("n", "15"),
                    ("t", "user"),
                    ("page", "v_user/t"),
                    ("o", "C14_9_3"),
                    ("S", "16"),
                    ("h", "TOP.t.C14_9_3"),
                ]),
                count_user,
            ),
        ] {
            s.push_str(&format!("C '{kv}' {n}\n"));
        }
        s
    }

    #[test]
    fn parses_verilator_points() {
        let p = parse(&sample(1, 0), Path::new("x.dat")).unwrap();
        assert_eq!(p.len(), 5);
        assert_eq!(p[0].kind, Kind::Branch);
        assert_eq!((p[0].line, p[0].col, p[0].count), (5, 5, 1));
        assert_eq!(p[0].module, "t");
        assert_eq!(p[0].what, "if");
        assert_eq!(p[3].what, "clk_i:0->1");
        // the parameters after `__` are not part of the module
        assert_eq!(p[1].module, "t");
        assert_eq!(p[4].kind, Kind::User);
    }

    #[test]
    fn bad_files_name_file_and_line() {
        let e = parse("hello\n", Path::new("a.dat"))
            .unwrap_err()
            .to_string();
        assert!(e.starts_with("a.dat:1:"), "{e}");
        let e = parse("# SystemC::Coverage-3\nC 'x' many\n", Path::new("b.dat"))
            .unwrap_err()
            .to_string();
        assert!(
            e.starts_with("b.dat:2:") && e.contains("not a number"),
            "{e}"
        );
        let e = parse("# SystemC::Coverage-3\nX\n", Path::new("c.dat"))
            .unwrap_err()
            .to_string();
        assert!(e.starts_with("c.dat:2:"), "{e}");
    }

    #[test]
    fn merging_takes_any_hit_and_the_first_run() {
        let mut m = Merged::default();
        m.add("1-unit/a", parse(&sample(0, 0), Path::new("a")).unwrap());
        m.add("2-regress/b", parse(&sample(0, 3), Path::new("b")).unwrap());
        m.add("3-soak/c", parse(&sample(2, 1), Path::new("c")).unwrap());
        m.relative_to(Path::new("/r"));
        let s = m.summary(|f| f.starts_with("rtl/"));
        let t = &s["t"];
        // line 1/1, branch arms 2/2 (the if arm hit only by the third run),
        // toggle 1/1, the cover point 1/1.
        assert_eq!(
            t.line,
            Frac {
                hit: 1,
                total: 1,
                waived: 0
            }
        );
        assert_eq!(
            t.branch,
            Frac {
                hit: 2,
                total: 2,
                waived: 0
            }
        );
        assert_eq!(
            t.rules,
            Frac {
                hit: 1,
                total: 1,
                waived: 0
            }
        );
        let cp = m.cover_points();
        assert_eq!(cp.len(), 1);
        assert_eq!(cp[0].1, "C14_9_3");
        assert_eq!(cp[0].2, 4);
        assert_eq!(cp[0].3.as_deref(), Some("2-regress/b"));
        // A filter that keeps nothing counts nothing.
        assert!(m.summary(|f| f.starts_with("sim/")).is_empty());
    }

    #[test]
    fn lcov_has_lines_and_arms() {
        let mut m = Merged::default();
        m.add("a", parse(&sample(0, 1), Path::new("a")).unwrap());
        m.relative_to(Path::new("/r"));
        let l = m.lcov(|_| true);
        assert!(l.contains("SF:rtl/t.sv\n"), "{l}");
        assert!(l.contains("DA:4,7\n"), "{l}");
        assert!(
            l.contains("BRDA:5,0,0,0\n") && l.contains("BRDA:5,0,1,6\n"),
            "{l}"
        );
        assert!(l.contains("LF:1\nLH:1\nBRF:2\nBRH:1\nend_of_record"), "{l}");
    }

    #[test]
    fn summary_json_has_every_metric() {
        let mut m = Merged::default();
        m.add("a", parse(&sample(1, 0), Path::new("a")).unwrap());
        let s = m.summary(|_| true);
        let t = total(&s);
        let j = summary_json(&s, &t);
        assert_eq!(j["total"]["line"], serde_json::json!(100.0));
        assert_eq!(
            j["total"]["rules"],
            serde_json::json!({"hit": 0, "total": 1})
        );
        assert!(j["total"]["fsm_states"].is_null());
        assert!(table(&s, &t).contains("total"));
    }

    #[test]
    fn fsm_cover_properties_count_as_states_and_arcs() {
        let user = |name: &str, n: u64| {
            format!(
                "C '\x01f\x02rtl/f.sv\x01l\x029\x01t\x02user\x01page\x02v_user/f\x01o\x02{name}\x01h\x02TOP.f' {n}\n"
            )
        };
        let text = format!(
            "# SystemC::Coverage-3\n{}{}{}{}",
            user("FSM_S_StIdle", 5),
            user("FSM_S_StPkt", 0),
            user("FSM_A_StIdle_StPkt", 0),
            user("C14_6_rx", 2)
        );
        let p = parse(&text, Path::new("f.dat")).unwrap();
        let kinds: Vec<Kind> = p.iter().map(|p| p.kind).collect();
        assert_eq!(
            kinds,
            [Kind::FsmState, Kind::FsmState, Kind::FsmArc, Kind::User]
        );
        let mut m = Merged::default();
        m.add("r", p);
        let s = &m.summary(|_| true)["f"];
        assert_eq!(
            s.fsm_states,
            Frac {
                hit: 1,
                total: 2,
                waived: 0
            }
        );
        assert_eq!(
            s.fsm_arcs,
            Frac {
                hit: 0,
                total: 1,
                waived: 0
            }
        );
        assert_eq!(
            s.rules,
            Frac {
                hit: 1,
                total: 1,
                waived: 0
            }
        );
        // every cover property is listed, the FSMs' too
        assert_eq!(m.cover_points().len(), 4);
    }
}
