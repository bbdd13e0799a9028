//! Shared by the integration tests: the ibsim example topologies kept in
//! `tests/topologies/` (copied from Debian ibsim-utils' net-examples).

#![allow(dead_code)]

use std::path::{Path, PathBuf};

use vl15::agents::ibsim::{ibnetdiscover_path, umad2sim_command, IbsimServer};
use vl15::agents::serve::Background;

/// Every example file ibsim ships.
pub const EXAMPLES: &[&str] = &[
    "net",
    "net.1",
    "net.2sw2path",
    "net.2sw2path4hca",
    "net.2sw2path4hca2port",
];

/// `tests/topologies/`.
pub fn topo_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/topologies")
}

/// A file in `tests/topologies/`.
pub fn topo(name: &str) -> PathBuf {
    topo_dir().join(name)
}

/// The real ibnetdiscover run against `server`, attached at `node`.
pub fn real_ibnetdiscover(server: &IbsimServer, node: Option<&str>) -> String {
    let exe = ibnetdiscover_path().unwrap_or_else(|e| panic!("{e:#}"));
    run_tool(
        server
            .umad2sim_command(&exe, node)
            .unwrap_or_else(|e| panic!("{e:#}")),
    )
}

/// Run a umad2sim tool (a command from `umad2sim_command`) in a scratch
/// directory (umad2sim writes `./sys-<pid>` there); its stdout. Panics
/// unless it exits 0.
pub fn run_tool(mut cmd: std::process::Command) -> String {
    let scratch = tempfile::tempdir().unwrap();
    let out = cmd
        .current_dir(scratch.path())
        .output()
        .unwrap_or_else(|e| panic!("running {cmd:?}: {e}"));
    assert!(
        out.status.success(),
        "{cmd:?} failed ({}): {}",
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).expect("the tool's output is UTF-8")
}

/// An installed program (Debian's infiniband-diags, opensm).
pub fn sbin(name: &str) -> PathBuf {
    ["/usr/sbin", "/usr/bin", "/sbin"]
        .iter()
        .map(|d| Path::new(d).join(name))
        .find(|p| p.is_file())
        .unwrap_or_else(|| panic!("{name} not found: run `make deps`"))
}

/// The real `opensm -o` with `args` at `node` of the ibsim-protocol server
/// `sockname`: its log, once it reached SUBNET UP (a panic otherwise).
pub fn opensm_once(sockname: &str, node: &str, args: &[&str]) -> String {
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("osm.log");
    let status = umad2sim_command(sockname, &sbin("opensm"), Some(node))
        .unwrap()
        .current_dir(dir.path())
        .env("OSM_CACHE_DIR", dir.path())
        .env("OSM_TMP_DIR", dir.path())
        .arg("-o")
        .args(args)
        .arg("-f")
        .arg(&log)
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .status()
        .unwrap();
    let text = std::fs::read_to_string(&log).unwrap_or_default();
    assert!(
        status.success() && text.contains("SUBNET UP"),
        "opensm -o {args:?} at {node} on @{sockname}: {status}\n{text}"
    );
    text
}

/// Stop a `vl15 serve` running in this process (from a `Drop`): its
/// failure fails the test, unless the test is failing already.
pub fn stop_server(server: &mut Option<Background>) {
    if let Some(s) = server.take() {
        let r = s.stop();
        if !std::thread::panicking() {
            r.expect("vl15 serve failed");
        }
    }
}

/// `timeout 20 <tool> args` at `node` of the ibsim-protocol server
/// `sockname` (a lost MAD fails the test instead of hanging it).
pub fn diag_command(
    sockname: &str,
    node: &str,
    tool: &str,
    args: &[&str],
) -> std::process::Command {
    let mut c = umad2sim_command(sockname, Path::new("/usr/bin/timeout"), Some(node)).unwrap();
    c.arg("20").arg(sbin(tool)).args(args);
    c
}
