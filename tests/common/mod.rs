//! Shared by the integration tests: the ibsim example topologies kept in
//! `tests/topologies/` (copied from Debian ibsim-utils' net-examples).

#![allow(dead_code)]

use std::path::{Path, PathBuf};

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
