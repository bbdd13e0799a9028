//! Cross-check packets with Wireshark's InfiniBand dissector through
//! `tshark`. tshark cannot read LINKTYPE 247 (ibspec §11), so captures are
//! read with link type USER0 (147) mapped to the `infiniband` dissector by a
//! user-DLT table given on the command line; an INFINIBAND-typed capture is
//! first copied to a USER0 temp file.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::atomic::{AtomicU64, Ordering};

use anyhow::{bail, Context, Result};

use crate::proto::pcap::{read_pcap, write_pcap, LinkType};

pub use crate::proto::pcap::USER0_INFINIBAND_UAT;

/// The tshark binary, or an error telling how to install it.
pub fn tshark_path() -> Result<PathBuf> {
    let out = Command::new("tshark").arg("--version").output();
    match out {
        Ok(o) if o.status.success() => Ok(PathBuf::from("tshark")),
        Ok(o) => bail!(
            "`tshark --version` failed ({}): run `make deps` to install tshark (CI installs it)",
            o.status
        ),
        Err(e) => {
            bail!("tshark not found ({e}): run `make deps` to install tshark (CI installs it)")
        }
    }
}

/// A USER0 copy of `pcap` if it has another link type; removed on drop.
struct User0File {
    path: PathBuf,
    temp: bool,
}

impl Drop for User0File {
    fn drop(&mut self) {
        if self.temp {
            let _ = std::fs::remove_file(&self.path);
        }
    }
}

fn as_user0(pcap: &Path) -> Result<User0File> {
    static N: AtomicU64 = AtomicU64::new(0);
    let cap = read_pcap(pcap)?;
    if cap.link_type == LinkType::User0 {
        return Ok(User0File {
            path: pcap.to_path_buf(),
            temp: false,
        });
    }
    let path = std::env::temp_dir().join(format!(
        "vl15-tshark-{}-{}.pcap",
        std::process::id(),
        N.fetch_add(1, Ordering::Relaxed)
    ));
    write_pcap(&path, LinkType::User0, &cap.records)?;
    Ok(User0File { path, temp: true })
}

fn run_tshark(pcap: &Path, extra: &[&str]) -> Result<String> {
    let exe = tshark_path()?;
    let file = as_user0(pcap)?;
    let out = Command::new(exe)
        .arg("-n")
        .arg("-o")
        .arg(USER0_INFINIBAND_UAT)
        .arg("-r")
        .arg(&file.path)
        .args(extra)
        .output()
        .context("running tshark")?;
    if !out.status.success() {
        bail!(
            "tshark failed on {} ({}): {}",
            pcap.display(),
            out.status,
            String::from_utf8_lossy(&out.stderr).trim()
        );
    }
    Ok(String::from_utf8_lossy(&out.stdout).into_owned())
}

/// The values of `fields` (tshark field names, e.g. `infiniband.lrh.dlid`)
/// for every packet: one row per packet, one string per field ("" when the
/// dissector did not set it; repeated occurrences joined by ',').
pub fn tshark_fields(pcap: impl AsRef<Path>, fields: &[&str]) -> Result<Vec<Vec<String>>> {
    let mut args: Vec<&str> = vec!["-T", "fields", "-E", "separator=/t", "-E", "occurrence=a"];
    for f in fields {
        args.push("-e");
        args.push(f);
    }
    let text = run_tshark(pcap.as_ref(), &args)?;
    Ok(text
        .lines()
        .map(|l| {
            let mut row: Vec<String> = l.split('\t').map(str::to_string).collect();
            row.resize(fields.len(), String::new());
            row
        })
        .collect())
}

/// How many packets Wireshark marks malformed (`_ws.malformed`).
pub fn tshark_malformed(pcap: impl AsRef<Path>) -> Result<usize> {
    let text = run_tshark(
        pcap.as_ref(),
        &["-Y", "_ws.malformed", "-T", "fields", "-e", "frame.number"],
    )?;
    Ok(text.lines().filter(|l| !l.trim().is_empty()).count())
}

/// A tshark number: decimal or 0x-hex.
pub fn parse_num(s: &str) -> Option<u64> {
    let s = s.trim();
    match s.strip_prefix("0x").or_else(|| s.strip_prefix("0X")) {
        Some(h) => u64::from_str_radix(h, 16).ok(),
        None => s.parse().ok(),
    }
}
