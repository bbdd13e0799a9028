//! Whole runs the CLI starts: `vl15 replay` (`replay`, and `board` over a
//! serial line), `vl15 bench` (`bench` for one port, `netbench` for
//! fabrics and `vl15 serve` against ibsim). The verbs themselves are the
//! binary's `cmd` modules.

pub mod bench;
pub mod board;
pub mod netbench;
pub mod replay;
