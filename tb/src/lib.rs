//! vl15 testbench: drives real SMP traffic through the Verilated vl15 RTL.
//!
//! Layers, bottom up; a module imports only from its own layer and those
//! below it:
//! - [`proto`]: packets, MADs, CRCs, pcap, topology files;
//! - [`model`]: the Verilated devices, their drivers and register maps,
//!   the fabrics that clock them, traces;
//! - [`agents`]: SMAs, SM, QP0, GMP, discovery, the ibsim server;
//! - [`check`]: reference models, scoreboards, fault generators, the
//!   regression's scenarios, fuzzers;
//! - [`run`]: whole runs the CLI starts (replay, bench); the CLI's verbs
//!   are the binary's `cmd` modules, one file per verb.
//!
//! Two device stacks exist side by side: `model::device`/`model::fabric`
//! with `agents::sma`/`agents::sm` on one `ib_ca_top` port at DataW 32, 64
//! and 128 (the spine regression, replay, the CA soak), and `model::net`
//! with `agents::node_sma`/`qp0`/`subnet_sm` on the switch and multiport CA
//! at DataW 64 and 128 (every fabric, `vl15 serve`). New fabric behaviour
//! goes into the second.

pub mod agents;
pub mod check;
pub mod model;
pub mod proto;
pub mod run;
