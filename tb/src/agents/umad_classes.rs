//! The GMP classes a umad2sim client has agents for.
//!
//! A host's MAD layer hands a received GMP request to the agent registered
//! for its management class, and answers one that no agent takes (Linux
//! `ib_mad_recv_done`, `generate_unmatched_resp`). umad2sim keeps a
//! client's registrations (`IB_USER_MAD_REGISTER_AGENT`) inside the
//! client and tells the server nothing of them, and a client handed a MAD
//! of a class it has no agent for answers it through agent -1 and crashes
//! in umad2sim (observed with Debian's 0.10: `ibping -S` given a class 0x33
//! request). So `vl15 serve` delivers a request only to a client it knows
//! to have an agent for the class, and learns that from:
//!
//! - the answers the client sends: a client that answered a request of
//!   class C on QP1 has a server's agent for C (one that only sends
//!   requests, such as the pinging `ibping`, takes no requests);
//! - the servers of infiniband-diags, by their command line
//!   (`/proc/<pid>/cmdline`): `ibping -S` serves vendor class 0x32
//!   (`IB_VENDOR_OPENIB_PING_CLASS`), `ibsysstat -S` class 0x33
//!   (`IB_VENDOR_OPENIB_SYSSTAT_CLASS`), before they have sent anything;
//! - `VL15_GMP_CLASSES` in the client's environment (`/proc/<pid>/environ`):
//!   a comma-separated list of classes (`0x32,0x40` or decimal), for a
//!   user's own server.

use anyhow::{anyhow, bail, Result};

/// A set of management classes (0..=255).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Classes([u64; 4]);

impl Classes {
    pub fn add(&mut self, class: u8) {
        self.0[usize::from(class >> 6)] |= 1 << (class & 63);
    }

    pub fn has(&self, class: u8) -> bool {
        self.0[usize::from(class >> 6)] >> (class & 63) & 1 != 0
    }

    pub fn is_empty(&self) -> bool {
        self.0 == [0; 4]
    }

    /// The classes, ascending.
    pub fn iter(&self) -> impl Iterator<Item = u8> + '_ {
        (0..=255u8).filter(|&c| self.has(c))
    }
}

/// The environment variable naming a client's GMP classes.
pub const ENV: &str = "VL15_GMP_CLASSES";

/// Parse a `VL15_GMP_CLASSES` value: classes separated by commas, each
/// `0x..` hex or decimal, 0..=255.
pub fn parse_list(s: &str) -> Result<Classes> {
    let mut c = Classes::default();
    for item in s.split(',').map(str::trim).filter(|x| !x.is_empty()) {
        let v = match item.strip_prefix("0x").or_else(|| item.strip_prefix("0X")) {
            Some(h) => u32::from_str_radix(h, 16),
            None => item.parse::<u32>(),
        }
        .map_err(|_| anyhow!("{ENV}: {item:?} is not a class (0x32 or 50)"))?;
        let Ok(v) = u8::try_from(v) else {
            bail!("{ENV}: class {item} is over 255");
        };
        c.add(v);
    }
    Ok(c)
}

/// The classes infiniband-diags' servers register, from a command line
/// (its arguments, program first).
pub fn of_command_line(args: &[&str]) -> Classes {
    let mut c = Classes::default();
    let Some(prog) = args.first() else {
        return c;
    };
    let prog = prog.rsplit('/').next().unwrap_or(prog);
    // -S / --Server, alone or in a cluster of short options (-vS)
    let server = args[1..].iter().any(|a| {
        *a == "--Server" || (a.starts_with('-') && !a.starts_with("--") && a[1..].contains('S'))
    });
    match prog {
        "ibping" if server => c.add(0x32),
        "ibsysstat" if server => c.add(0x33),
        _ => {}
    }
    c
}

/// What process `pid` declares: its command line as
/// [`of_command_line`] reads it and its `VL15_GMP_CLASSES`. A process
/// whose files cannot be read (gone, another user's) declares nothing; a
/// bad `VL15_GMP_CLASSES` is an error (the classes read up to it stay
/// unknown).
pub fn declared(pid: u32) -> Result<Classes> {
    let mut c = Classes::default();
    if let Ok(raw) = std::fs::read(format!("/proc/{pid}/cmdline")) {
        let args: Vec<String> = raw
            .split(|&b| b == 0)
            .filter(|a| !a.is_empty())
            .map(|a| String::from_utf8_lossy(a).into_owned())
            .collect();
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        c = of_command_line(&args);
    }
    if let Ok(raw) = std::fs::read(format!("/proc/{pid}/environ")) {
        let prefix = format!("{ENV}=");
        for var in raw.split(|&b| b == 0) {
            if let Some(v) = var.strip_prefix(prefix.as_bytes()) {
                for k in parse_list(&String::from_utf8_lossy(v))?.iter() {
                    c.add(k);
                }
            }
        }
    }
    Ok(c)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_diags_servers_and_nothing_else() {
        assert!(of_command_line(&["ibping", "-S"]).has(0x32));
        assert!(of_command_line(&["/usr/sbin/ibping", "-v", "--Server"]).has(0x32));
        assert!(of_command_line(&["ibping", "-vS"]).has(0x32));
        assert!(of_command_line(&["ibsysstat", "-S"]).has(0x33));
        assert!(!of_command_line(&["ibsysstat", "-S"]).has(0x32));
        // the pinging side registers a client agent only: no requests
        assert!(of_command_line(&["ibping", "-c", "3", "-L", "4"]).is_empty());
        assert!(of_command_line(&["ibping", "--count", "3", "4"]).is_empty());
        assert!(of_command_line(&["opensm", "-S"]).is_empty());
        assert!(of_command_line(&[]).is_empty());
    }

    #[test]
    fn class_lists() {
        let c = parse_list("0x32, 51,0X40").unwrap();
        assert_eq!(c.iter().collect::<Vec<_>>(), vec![0x32, 0x33, 0x40]);
        assert!(parse_list("").unwrap().is_empty());
        assert!(parse_list("0x100").is_err());
        assert!(parse_list("ping").is_err());
        assert!(parse_list("-1").is_err());
    }

    /// `sleep 5` with `VL15_GMP_CLASSES` = `v`, once it runs `sleep`.
    fn sleeper(v: &str) -> std::process::Child {
        let child = std::process::Command::new("sleep")
            .arg("5")
            .env(ENV, v)
            .spawn()
            .unwrap();
        let cmdline = format!("/proc/{}/cmdline", child.id());
        for _ in 0..200 {
            if std::fs::read(&cmdline).is_ok_and(|c| c.starts_with(b"sleep\0")) {
                break;
            }
            std::thread::sleep(std::time::Duration::from_millis(5));
        }
        child
    }

    #[test]
    fn a_process_declares_classes_in_its_environment() {
        let mut child = sleeper("0x41,7");
        let c = declared(child.id()).unwrap();
        let _ = child.kill();
        let _ = child.wait();
        assert_eq!(c.iter().collect::<Vec<_>>(), vec![7, 0x41]);
        let mut bad = sleeper("0x41,x");
        let e = declared(bad.id());
        let _ = bad.kill();
        let _ = bad.wait();
        assert!(e.is_err());
    }
}
