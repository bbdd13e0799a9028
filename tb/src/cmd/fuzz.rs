//! `vl15 fuzz`.

use anyhow::Result;
use clap::Args as ClapArgs;

use super::parse_u64;

#[derive(ClapArgs)]
pub struct Args {
    /// decode, pcap, topology, ibsim, console, sma, serve (a hostile
    /// client storm against vl15 serve, then a well-behaved client),
    /// or all (repeatable)
    #[arg(long, default_value = "all")]
    target: Vec<String>,
    /// Seconds per target
    #[arg(long, default_value_t = 10)]
    seconds: u64,
    /// Seed of the run, decimal or 0x hex (default: from the clock;
    /// printed either way)
    #[arg(long, value_parser = parse_u64)]
    seed: Option<u64>,
    /// At most this many cases per target (default: no limit, --seconds
    /// alone ends each target)
    #[arg(long, value_parser = super::parse_count)]
    max_cases: Option<u64>,
    /// A case running longer than this many seconds is a hang
    #[arg(long, default_value_t = 10, value_parser = super::parse_count)]
    hang_seconds: u64,
    /// Replay one case of one --target by its case seed and print its input
    #[arg(long, value_parser = parse_u64)]
    case_seed: Option<u64>,
}

impl Args {
    pub fn run(self) -> Result<bool> {
        use vl15::check::fuzz::{self, Target};
        let mut list: Vec<String> = Vec::new();
        for t in &self.target {
            if t == "all" {
                list.extend(Target::ALL.iter().map(|t| t.name().to_string()));
                list.push("serve".into());
            } else if t == "serve" || t.parse::<Target>().is_ok() {
                list.push(t.clone());
            } else {
                let names: Vec<_> = Target::ALL.iter().map(|t| t.name()).collect();
                super::usage(&format!(
                    "--target {t:?}: no such fuzz target (targets: {}, serve, all)",
                    names.join(", ")
                ));
            }
        }
        if let Some(cs) = self.case_seed {
            let [t] = list.as_slice() else {
                super::usage(
                    "--case-seed replays one case of one --target (give exactly one, not all)",
                );
            };
            let Ok(target) = t.parse::<Target>() else {
                super::usage(&format!("--case-seed: {t} has no case seeds to replay"));
            };
            let input = fuzz::replay(target, cs)?;
            outln!(
                "case {cs:#x} of {t} passes; input: {}",
                fuzz::hex(&input, 4096)
            );
            return Ok(true);
        }
        let seconds = self.seconds;
        let seed = self.seed.unwrap_or_else(|| {
            std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map(|d| d.as_nanos() as u64)
                .unwrap_or(1)
        });
        outln!("fuzz: seed {seed:#018x}, {seconds} s per target");
        let limits = fuzz::Limits {
            time: std::time::Duration::from_secs(seconds),
            max_cases: self.max_cases.unwrap_or(u64::MAX),
            hang: std::time::Duration::from_secs(self.hang_seconds),
            stop_on_failure: false,
        };
        let mut ok = true;
        let mut total = 0u64;
        for t in &list {
            let bar = super::progress(None, &format!("fuzz {t}"));
            bar.set_message(format!("up to {seconds} s"));
            if t == "serve" {
                let r =
                    vl15::check::hostile::storm_run(seed, std::time::Duration::from_secs(seconds));
                bar.finish_and_clear();
                let r = r?;
                outln!("{}", r.summary());
                ok &= r.ok();
                total += r.sent;
                continue;
            }
            let target: Target = t.parse()?;
            let r = fuzz::run(target, seed, limits);
            bar.finish_and_clear();
            let r = r?;
            outln!("{}", r.summary());
            total += r.cases;
            for f in r.failures.iter().take(10) {
                outln!(
                    "  FAIL case seed {:#018x}: {}\n    input: {}\n    replay: vl15 fuzz --target {} --case-seed {:#x}",
                    f.case_seed,
                    f.what,
                    fuzz::hex(&f.input, 512),
                    target,
                    f.case_seed
                );
            }
            ok &= r.failures.is_empty();
        }
        outln!(
            "fuzz: {} targets, {total} cases/datagrams, {}",
            list.len(),
            if ok { "no failures" } else { "FAILURES" }
        );
        Ok(ok)
    }
}
