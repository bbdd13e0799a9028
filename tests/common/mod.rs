//! Shared by the integration tests: the ibsim example topologies kept in
//! `tests/topologies/` (copied from Debian ibsim-utils' net-examples).

#![allow(dead_code)]

use std::path::{Path, PathBuf};

use vl15::agents::ibsim::{ibnetdiscover_path, IbsimServer};

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
