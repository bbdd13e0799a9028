//! `vl15 check-rtl`.

use std::path::{Path, PathBuf};

use anyhow::{Context, Result};
use clap::Args as ClapArgs;
use vl15::check::rtl_replay::{self, CheckOptions, Report};
use vl15::proto::InputError;

#[derive(ClapArgs)]
pub struct Args {
    /// A recording of --record (sim, discover, serve): its manifest.json
    /// and record.bin
    #[arg(required_unless_present = "merge")]
    dir: Option<PathBuf>,
    /// Workers replaying devices at once (default: the machine's cores)
    #[arg(long, default_value_t = super::default_threads(), value_parser = clap::value_parser!(u16).range(1..=1024))]
    jobs: u16,
    /// Only the devices whose node id or NodeDescription one of these
    /// names, comma-separated, `*` standing for any run of characters
    #[arg(long, value_name = "PATTERN", value_delimiter = ',')]
    device: Vec<String>,
    /// Only share I of N of the devices (1 ≤ I ≤ N), for a job array: the
    /// shares are balanced by recorded size and the same in every run
    #[arg(long, value_name = "I/N", value_parser = parse_shard)]
    shard: Option<(usize, usize)>,
    /// Also write the report as JSON to OUT (for --merge)
    #[arg(long, value_name = "OUT")]
    report: Option<PathBuf>,
    /// Write a Slurm array job to FILE instead of checking: one task per
    /// shard, each `vl15 check-rtl DIR --shard I/N --report
    /// DIR/reports/shard-I.json`; then `vl15 check-rtl --merge
    /// DIR/reports/*.json`
    #[arg(long, value_name = "FILE", conflicts_with_all = ["shard", "report", "merge"])]
    emit_slurm: Option<PathBuf>,
    /// Tasks of the --emit-slurm array
    #[arg(long, default_value_t = 8, requires = "emit_slurm", value_parser = clap::value_parser!(u16).range(1..=10000))]
    shards: u16,
    /// CPUs each task of the --emit-slurm array asks for (its --jobs)
    #[arg(long, default_value_t = 1, requires = "emit_slurm", value_parser = clap::value_parser!(u16).range(1..=1024))]
    cpus_per_task: u16,
    /// Merge the reports of --report (one per shard) into the whole one
    /// and print it, instead of checking
    #[arg(long, value_name = "OUT", num_args = 1.., conflicts_with_all = ["dir", "shard", "device"])]
    merge: Vec<PathBuf>,
}

/// `I/N` of --shard.
fn parse_shard(s: &str) -> Result<(usize, usize), String> {
    let bad = || format!("{s:?}: a share I/N with 1 <= I <= N, e.g. 2/8");
    let (i, n) = s.split_once('/').ok_or_else(bad)?;
    let (i, n) = (
        i.trim().parse::<usize>().map_err(|_| bad())?,
        n.trim().parse::<usize>().map_err(|_| bad())?,
    );
    if i == 0 || i > n {
        return Err(bad());
    }
    Ok((i, n))
}

impl Args {
    pub fn run(self) -> Result<bool> {
        if !self.merge.is_empty() {
            let mut parts = Vec::new();
            for p in &self.merge {
                let text = std::fs::read_to_string(p)
                    .map_err(|e| InputError(format!("{}: {e}", p.display())))?;
                let r: Report = serde_json::from_str(&text).map_err(|e| {
                    InputError(format!(
                        "{}: not a report of check-rtl --report: {e}",
                        p.display()
                    ))
                })?;
                parts.push((p.clone(), r));
            }
            let r = rtl_replay::merge(&parts)?;
            out!("{}", r.content());
            return Ok(r.ok());
        }
        let Some(dir) = &self.dir else {
            super::usage("give a recording's directory or --merge");
        };
        if let Some(f) = &self.emit_slurm {
            return emit_slurm(dir, f, usize::from(self.shards), self.cpus_per_task);
        }
        let opts = CheckOptions {
            jobs: usize::from(self.jobs),
            devices: self.device.clone(),
            shard: self.shard,
        };
        let r = rtl_replay::check(dir, &opts)?;
        if let Some(p) = &self.report {
            if let Some(parent) = p.parent().filter(|p| !p.as_os_str().is_empty()) {
                std::fs::create_dir_all(parent)
                    .map_err(|e| InputError(format!("{}: {e}", parent.display())))?;
            }
            let text = serde_json::to_string_pretty(&r).context("writing the report")?;
            std::fs::write(p, text + "\n")
                .map_err(|e| InputError(format!("{}: cannot write: {e}", p.display())))?;
        }
        out!("{}", r.text());
        Ok(r.ok())
    }
}

/// The Slurm array job that checks recording `dir` in `shards` tasks.
fn emit_slurm(dir: &Path, file: &Path, shards: usize, cpus: u16) -> Result<bool> {
    let m = rtl_replay::open(dir)?;
    let dir =
        std::fs::canonicalize(dir).map_err(|e| InputError(format!("{}: {e}", dir.display())))?;
    let exe = std::env::current_exe().context("finding this executable")?;
    let q = |p: &Path| format!("'{}'", p.display().to_string().replace('\'', r"'\''"));
    let reports = dir.join("reports");
    std::fs::create_dir_all(&reports)
        .map_err(|e| InputError(format!("{}: {e}", reports.display())))?;
    let text = format!(
        "#!/bin/bash\n\
         # vl15 check-rtl of {dirs}: {n} recorded devices in {shards} shares.\n\
         # Submit: sbatch {files}; when it is done: {exe} check-rtl --merge {rep}/shard-*.json\n\
         # Every node must see the recording's directory and run the vl15 that recorded it.\n\
         #SBATCH --job-name=vl15-check-rtl\n\
         #SBATCH --array=1-{shards}\n\
         #SBATCH --ntasks=1\n\
         #SBATCH --cpus-per-task={cpus}\n\
         #SBATCH --output={out}\n\
         set -eu\n\
         mkdir -p {rep}\n\
         {exe} check-rtl {dirq} --jobs \"${{SLURM_CPUS_PER_TASK:-{cpus}}}\" \
         --shard \"$SLURM_ARRAY_TASK_ID/{shards}\" \
         --report {rep}/shard-\"$SLURM_ARRAY_TASK_ID\".json\n",
        dirs = dir.display(),
        n = m.devices.len(),
        files = file.display(),
        exe = q(&exe),
        rep = q(&reports),
        dirq = q(&dir),
        out = dir.join("reports").join("slurm-%A_%a.out").display(),
    );
    std::fs::write(file, text)
        .map_err(|e| InputError(format!("{}: cannot write: {e}", file.display())))?;
    eprintln!(
        "check-rtl: {} written: {shards} tasks over {} devices; sbatch it, then merge {}/shard-*.json",
        file.display(),
        m.devices.len(),
        reports.display()
    );
    Ok(true)
}
