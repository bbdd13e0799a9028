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
//! Every Verilated top is a `model::dut::Dut`: the switch, the multiport CA
//! and `ib_ca_top`. Two host stacks drive them side by side:
//! `model::device::CaPort` (one CA port of any CA model, with stream
//! drivers) in `model::fabric` with `agents::sma`/`agents::sm` (the spine
//! regression, replay, the CA soak and scoreboard), and `model::net` with
//! `agents::node_sma`/`qp0`/`subnet_sm` (every fabric from a topology
//! file, `vl15 serve`). New fabric behaviour goes into the second.

pub mod agents;
pub mod check;
pub mod model;
pub mod proto;
pub mod run;
