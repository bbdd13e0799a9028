//! `vl15 coverage`.

use std::collections::BTreeSet;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use anyhow::{Context, Result};
use clap::Args as ClapArgs;
use vl15::check::coverage::{self, Merged};
use vl15::check::waivers::Waivers;
use vl15::proto::InputError;

/// The FPGA board wrappers: counted apart from the RTL's totals (their
/// UART side is the board harness's).
const BOARD: &str = "rtl/fpga/";
/// The source of the SMA's cells (`model::cells`), and their module.
const CELLS: &str = "tb/src/model/cells.rs";
const CELLS_MODULE: &str = "sma_cells";

#[derive(ClapArgs)]
pub struct Args {
    /// Directories holding the coverage files (`*.dat`, any depth); the
    /// run that hits a cover point first is the first file in path order
    #[arg(value_name = "DIR", required = true)]
    dirs: Vec<PathBuf>,
    /// Where the reports go
    #[arg(long, value_name = "DIR", default_value = "build/coverage")]
    out: PathBuf,
    /// The repository the models were built from: source paths are
    /// reported relative to it
    #[arg(long, value_name = "DIR", default_value = ".")]
    root: PathBuf,
    /// Fail (exit 1) when the RTL's line coverage is below this percent
    #[arg(long, value_name = "PCT", value_parser = parse_pct)]
    min_line: Option<f64>,
    /// Fail (exit 1) when the RTL's branch coverage is below this percent
    #[arg(long, value_name = "PCT", value_parser = parse_pct)]
    min_branch: Option<f64>,
    /// Fail (exit 1) when a cover point named in FILE (one `module name`
    /// per line, `#` comments) is not hit
    #[arg(long, value_name = "FILE")]
    baseline: Option<PathBuf>,
    /// Write the cover points hit in this run to FILE, in --baseline's form
    #[arg(long, value_name = "FILE")]
    write_baseline: Option<PathBuf>,
    /// The lines and cover points no test reaches, each with its reason
    /// (`<file>:<line>[-<line>] | <text of the line> | <reason>` or
    /// `cover <module> <name> | <reason>`): they leave the percentages and
    /// are listed apart. A waiver whose line no longer reads its text is an
    /// error
    #[arg(long, value_name = "FILE")]
    waivers: Option<PathBuf>,
}

fn parse_pct(s: &str) -> Result<f64, String> {
    match s.parse::<f64>() {
        Ok(v) if (0.0..=100.0).contains(&v) => Ok(v),
        _ => Err(format!("{s:?} is not a percentage from 0 to 100")),
    }
}

impl Args {
    pub fn run(self) -> Result<bool> {
        let mut files = Vec::new();
        for d in &self.dirs {
            if !d.is_dir() {
                return Err(InputError(format!("{}: not a directory", d.display())).into());
            }
            let found = coverage::read_dir(d)?;
            files.extend(found.into_iter().map(|f| (d.clone(), f)));
        }
        if files.is_empty() {
            return Err(
                InputError("no coverage files (*.dat) in the directories given".into()).into(),
            );
        }
        let mut m = Merged::default();
        for (base, f) in &files {
            m.read_file(f, base)?;
        }
        let root = std::fs::canonicalize(&self.root)
            .with_context(|| format!("--root {}", self.root.display()))?;
        m.relative_to(&root);
        let waivers = match &self.waivers {
            Some(p) => {
                let w = Waivers::read(p)?;
                w.check_sources(&root)?;
                w
            }
            None => Waivers::default(),
        };
        let waived_by = m.waive(&waivers);
        let rtl = |f: &str| f.starts_with("rtl/") && !f.starts_with(BOARD);
        let board = |f: &str| f.starts_with(BOARD);
        let modules = m.summary(rtl);
        let board_modules = m.summary(board);
        let total = coverage::total(&modules);
        let board_total = coverage::total(&board_modules);

        std::fs::create_dir_all(&self.out)
            .with_context(|| format!("creating {}", self.out.display()))?;
        let mut all = modules.clone();
        all.extend(board_modules.clone());
        let mut json = coverage::summary_json(&all, &total);
        json["total_board"] =
            coverage::summary_json(&Default::default(), &board_total)["total"].clone();
        // The testbench's own cells (model::cells): counted apart from the RTL.
        let cells = coverage::total(&m.summary(|f| f.starts_with(CELLS)));
        json["cells"] = serde_json::json!({ "hit": cells.rules.hit, "total": cells.rules.total });
        write(&self.out.join("summary.json"), &format!("{json:#}\n"))?;
        write(
            &self.out.join("coverage.info"),
            &m.lcov(|f| f.starts_with("rtl/")),
        )?;
        let cps = m.cover_points();
        let mut text = String::from(
            "# cover point, module, hits, the run that hit it first (or the waiver)\n",
        );
        for (module, name, n, first) in &cps {
            let by = match (first, waivers.find("", 0, module, name, true)) {
                (Some(f), _) => f.clone(),
                (None, Some(i)) => format!("waived: {}", waivers.0[i].reason),
                (None, None) => "-".to_string(),
            };
            let _ = writeln!(text, "{name} {module} {n} {by}");
        }
        write(&self.out.join("cover_points.txt"), &text)?;
        write(&self.out.join("uncovered.txt"), &uncovered(&m, &waivers))?;

        outln!(
            "coverage: {} files from {} directories",
            m.files.len(),
            self.dirs.len()
        );
        outln!("RTL (rtl/, without the board wrappers):");
        out!("{}", coverage::table(&modules, &total));
        outln!("FPGA board wrappers (rtl/fpga/):");
        out!("{}", coverage::table(&board_modules, &board_total));
        outln!(
            "SMA cells (method × attribute × routing × outcome): {} of {} hit (cover_points.txt)",
            cells.rules.hit,
            cells.rules.total
        );
        let hit: Vec<_> = cps.iter().filter(|c| c.2 > 0).collect();
        let rtl_cps: Vec<_> = cps.iter().filter(|c| c.0 != CELLS_MODULE).collect();
        outln!(
            "RTL cover points: {} of {} hit",
            rtl_cps.iter().filter(|c| c.2 > 0).count(),
            rtl_cps.len()
        );
        for (module, name, _, _) in rtl_cps.iter().filter(|c| c.2 == 0) {
            match waivers.find("", 0, module, name, true) {
                Some(i) => outln!("  waived:  {name} ({module}): {}", waivers.0[i].reason),
                None => outln!("  not hit: {name} ({module})"),
            }
        }
        for (w, n) in waivers.0.iter().zip(&waived_by) {
            if *n == 0 {
                outln!("note: the waiver at {} waives nothing: its points were reached (or it names none)", w.at);
            }
        }
        outln!("reports: {}", self.out.display());

        if let Some(p) = &self.write_baseline {
            let mut s = String::from("# cover points a coverage run hit: module name\n");
            for (module, name, _, _) in &hit {
                let _ = writeln!(s, "{module} {name}");
            }
            write(p, &s)?;
        }
        let mut ok = true;
        for (what, min, got) in [
            ("line", self.min_line, total.line.pct()),
            ("branch", self.min_branch, total.branch.pct()),
        ] {
            if let Some(min) = min {
                let got = got.unwrap_or(0.0);
                if got < min {
                    outln!("FAIL: {what} coverage {got:.2} % is below {min} %");
                    ok = false;
                }
            }
        }
        if let Some(p) = &self.baseline {
            let want = read_baseline(p)?;
            let now: BTreeSet<(String, String)> = hit
                .iter()
                .map(|(m, n, _, _)| (m.clone(), n.clone()))
                .collect();
            for (module, name) in want.difference(&now) {
                outln!("FAIL: cover point {name} ({module}) was hit before and is not now");
                ok = false;
            }
        }
        Ok(ok)
    }
}

fn write(p: &Path, s: &str) -> Result<()> {
    std::fs::write(p, s).with_context(|| format!("writing {}", p.display()))
}

/// `module name` per line.
fn read_baseline(p: &Path) -> Result<BTreeSet<(String, String)>> {
    let text = std::fs::read_to_string(p).with_context(|| format!("reading {}", p.display()))?;
    let mut v = BTreeSet::new();
    for (i, l) in text.lines().enumerate() {
        let l = l.split('#').next().unwrap_or("").trim();
        if l.is_empty() {
            continue;
        }
        let mut w = l.split_whitespace();
        match (w.next(), w.next(), w.next()) {
            (Some(m), Some(n), None) => {
                v.insert((m.to_string(), n.to_string()));
            }
            _ => {
                return Err(InputError(format!(
                    "{}:{}: expected `module cover_point`",
                    p.display(),
                    i + 1
                ))
                .into())
            }
        }
    }
    Ok(v)
}

/// Every line, branch and cover point of the RTL no run reached, by file
/// and line: first those without a waiver, then the waived ones with their
/// reasons.
fn uncovered(m: &Merged, w: &Waivers) -> String {
    let mut s =
        String::from("# file:line kind what (module): points of rtl/ no run reached, no waiver\n");
    let mut waived = String::from("\n# waived: file:line kind what (module): reason (waiver)\n");
    for (k, t) in &m.points {
        if t.count > 0 || !k.file.starts_with("rtl/") {
            continue;
        }
        let kind = match k.kind {
            coverage::Kind::Line => "line",
            coverage::Kind::Branch => "branch",
            coverage::Kind::Expr => "expr",
            coverage::Kind::FsmState => "fsm_state",
            coverage::Kind::FsmArc => "fsm_arc",
            coverage::Kind::User => "cover",
            coverage::Kind::Toggle => continue,
        };
        match t.waived {
            None => {
                let _ = writeln!(s, "{}:{} {kind} {} ({})", k.file, k.line, k.what, k.module);
            }
            Some(i) => {
                let _ = writeln!(
                    waived,
                    "{}:{} {kind} {} ({}): {} ({})",
                    k.file, k.line, k.what, k.module, w.0[i].reason, w.0[i].at
                );
            }
        }
    }
    s.push_str(&waived);
    s
}
