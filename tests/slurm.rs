//! `vl15 check-rtl --emit-slurm` on a real Slurm: a one-node cluster on
//! localhost (munged, slurmctld and slurmd of Debian's slurm-wlm and munge,
//! as root, every port on 127.0.0.1), the array job of a small recorded
//! run submitted, and the merged report of its shards compared with the
//! local one. Skips, saying why, where Slurm cannot start: not root (slurmd
//! runs jobs as their users), the packages missing (`make deps` installs
//! them), or a daemon that does not come up (its log is printed).

use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

mod common;

fn tool(name: &str) -> Option<PathBuf> {
    ["/usr/sbin", "/usr/bin", "/sbin", "/bin"]
        .iter()
        .map(|d| Path::new(d).join(name))
        .find(|p| p.exists())
}

/// A free TCP port on 127.0.0.1.
fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .map(|a| a.port())
        .expect("a free port")
}

/// A one-node Slurm in a directory of its own; stopped when dropped.
struct Slurm {
    dir: PathBuf,
    munged: Option<Child>,
    conf: PathBuf,
    up: bool,
}

impl Slurm {
    fn cmd(&self, name: &str) -> Command {
        let mut c = Command::new(tool(name).unwrap_or_else(|| PathBuf::from(name)));
        c.env("SLURM_CONF", &self.conf);
        c
    }

    fn log_tail(&self) -> String {
        let mut s = String::new();
        for f in ["munged.log", "slurmctld.log", "slurmd.log"] {
            let t = std::fs::read_to_string(self.dir.join(f)).unwrap_or_default();
            let lines: Vec<&str> = t.lines().collect();
            s += &format!(
                "--- {f}\n{}\n",
                lines[lines.len().saturating_sub(8)..].join("\n")
            );
        }
        s
    }

    /// Start it, or say why it cannot start.
    fn start(dir: &Path) -> Result<Slurm, String> {
        if !nix_is_root() {
            return Err("not root: slurmd runs jobs as their users and must run as root".into());
        }
        for t in [
            "munged",
            "slurmctld",
            "slurmd",
            "sbatch",
            "sinfo",
            "scontrol",
        ] {
            if tool(t).is_none() {
                return Err(format!(
                    "{t} is not installed (Debian's slurm-wlm and munge; `make deps` installs them)"
                ));
            }
        }
        let m = dir.join("munge");
        std::fs::create_dir_all(&m).map_err(|e| e.to_string())?;
        for d in ["state", "spool", "reports"] {
            std::fs::create_dir_all(dir.join(d)).map_err(|e| e.to_string())?;
        }
        let key: Vec<u8> = (0..1024u32)
            .map(|k| (k.wrapping_mul(2_654_435_761) >> 13) as u8)
            .collect();
        let keyf = m.join("munge.key");
        std::fs::write(&keyf, key).map_err(|e| e.to_string())?;
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&keyf, std::fs::Permissions::from_mode(0o600))
            .map_err(|e| e.to_string())?;
        let sock = m.join("munge.sock");
        let munged = Command::new(tool("munged").unwrap())
            .arg("--foreground")
            .arg("--force")
            .arg(format!("--socket={}", sock.display()))
            .arg(format!("--key-file={}", keyf.display()))
            .arg(format!("--pid-file={}", m.join("munged.pid").display()))
            .arg(format!("--log-file={}", dir.join("munged.log").display()))
            .arg(format!("--seed-file={}", m.join("seed").display()))
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .map_err(|e| format!("starting munged: {e}"))?;
        let conf = dir.join("slurm.conf");
        let cpus = std::thread::available_parallelism().map_or(1, |n| n.get());
        let d = dir.display();
        let text = format!(
            "ClusterName=vl15check\n\
             SlurmctldHost=localhost(127.0.0.1)\n\
             SlurmUser=root\n\
             SlurmdUser=root\n\
             SlurmctldPort={}\n\
             SlurmdPort={}\n\
             CommunicationParameters=NoInAddrAny,NoCtldInAddrAny\n\
             AuthType=auth/munge\n\
             AuthInfo=socket={}\n\
             CredType=cred/munge\n\
             StateSaveLocation={d}/state\n\
             SlurmdSpoolDir={d}/spool\n\
             SlurmctldPidFile={d}/slurmctld.pid\n\
             SlurmdPidFile={d}/slurmd.pid\n\
             SlurmctldLogFile={d}/slurmctld.log\n\
             SlurmdLogFile={d}/slurmd.log\n\
             ProctrackType=proctrack/linuxproc\n\
             TaskPlugin=task/none\n\
             JobAcctGatherType=jobacct_gather/none\n\
             SchedulerType=sched/builtin\n\
             SelectType=select/cons_tres\n\
             SelectTypeParameters=CR_CPU\n\
             ReturnToService=2\n\
             MpiDefault=none\n\
             NodeName=vl15node NodeHostname=localhost NodeAddr=127.0.0.1 CPUs={cpus} State=UNKNOWN\n\
             PartitionName=vl15 Nodes=vl15node Default=YES MaxTime=INFINITE State=UP\n",
            free_port(),
            free_port(),
            sock.display()
        );
        std::fs::write(&conf, text).map_err(|e| e.to_string())?;
        let mut s = Slurm {
            dir: dir.to_path_buf(),
            munged: Some(munged),
            conf,
            up: false,
        };
        let t0 = Instant::now();
        while !sock.exists() {
            if t0.elapsed() > Duration::from_secs(10) {
                return Err(format!("munged did not come up\n{}", s.log_tail()));
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        s.up = true;
        for (daemon, args) in [("slurmctld", &[][..]), ("slurmd", &["-N", "vl15node"][..])] {
            let st = s
                .cmd(daemon)
                .arg("-f")
                .arg(&s.conf)
                .args(args)
                .status()
                .map_err(|e| format!("starting {daemon}: {e}"))?;
            if !st.success() {
                return Err(format!("{daemon} exited {st}\n{}", s.log_tail()));
            }
        }
        let t0 = Instant::now();
        loop {
            let o = s.cmd("sinfo").args(["-h", "-o", "%T"]).output();
            let state = o
                .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_string())
                .unwrap_or_default();
            if state == "idle" {
                return Ok(s);
            }
            if t0.elapsed() > Duration::from_secs(30) {
                return Err(format!(
                    "the node did not become idle (sinfo: {state:?})\n{}",
                    s.log_tail()
                ));
            }
            std::thread::sleep(Duration::from_millis(200));
        }
    }
}

impl Drop for Slurm {
    fn drop(&mut self) {
        if self.up {
            let _ = self.cmd("scontrol").arg("shutdown").status();
            for pid in ["slurmd.pid", "slurmctld.pid"] {
                if let Some(p) = std::fs::read_to_string(self.dir.join(pid))
                    .ok()
                    .and_then(|s| s.trim().parse::<i32>().ok())
                {
                    let _ = Command::new("kill").arg(p.to_string()).status();
                }
            }
        }
        if let Some(mut m) = self.munged.take() {
            let _ = m.kill();
            let _ = m.wait();
        }
    }
}

fn nix_is_root() -> bool {
    Command::new("id")
        .arg("-u")
        .output()
        .map(|o| String::from_utf8_lossy(&o.stdout).trim() == "0")
        .unwrap_or(false)
}

fn vl15() -> Command {
    Command::new(env!("CARGO_BIN_EXE_vl15"))
}

/// A report's lines that do not depend on how it ran.
fn content(out: &[u8]) -> String {
    String::from_utf8_lossy(out)
        .lines()
        .filter(|l| !l.starts_with("wall "))
        .collect::<Vec<_>>()
        .join("\n")
}

#[test]
fn check_rtl_array_job_on_slurm_matches_the_local_check() {
    let tmp = tempfile::tempdir().unwrap();
    let slurm = match Slurm::start(&tmp.path().join("slurm")) {
        Ok(s) => s,
        Err(why) => {
            eprintln!("SKIPPED: Slurm cannot start here: {why}");
            return;
        }
    };
    let rec = tmp.path().join("rec");
    let st = vl15()
        .args(["sim", "--fidelity", "twin", "--threads", "1", "--topology"])
        .arg(common::topo("net.2sw2path4hca"))
        .arg("--record")
        .arg(&rec)
        .status()
        .unwrap();
    assert!(st.success());
    let local = vl15().arg("check-rtl").arg(&rec).output().unwrap();
    assert!(
        local.status.success(),
        "{}",
        String::from_utf8_lossy(&local.stdout)
    );
    let job = tmp.path().join("check.sbatch");
    let o = vl15()
        .arg("check-rtl")
        .arg(&rec)
        .arg("--emit-slurm")
        .arg(&job)
        .args(["--shards", "3"])
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    // (bounded: a node that never runs the array must fail the test, not
    // hang it)
    let o = Command::new("timeout")
        .arg("300")
        .arg(tool("sbatch").unwrap())
        .env("SLURM_CONF", &slurm.conf)
        .arg("--wait")
        .arg(&job)
        .output()
        .unwrap();
    let reports: Vec<PathBuf> = (1..=3)
        .map(|k| rec.join("reports").join(format!("shard-{k}.json")))
        .collect();
    assert!(
        o.status.success() && reports.iter().all(|r| r.exists()),
        "sbatch: {}{}\n{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr),
        slurm.log_tail()
    );
    let merged = vl15()
        .args(["check-rtl", "--merge"])
        .args(&reports)
        .output()
        .unwrap();
    assert!(merged.status.success());
    assert_eq!(content(&merged.stdout), content(&local.stdout));
    assert!(content(&merged.stdout).contains("6 of 6 recorded devices checked"));
}
