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
//! and `ib_ca_top`. There is one SMA, `agents::node_sma::NodeSma` (ibsim's
//! answers, or a hardware HCA's in its HCA dialect), and one SM stack,
//! `agents::qp0::Transactions` under `agents::subnet_sm`. Two schedulers
//! clock the devices: `model::net` (every fabric from a topology file,
//! `vl15 serve`), and `model::fabric`, which drives CA ports on their own
//! through `model::device::CaPort`'s stream drivers (the spine regression,
//! replay, the CA soak and scoreboard), with `agents::sma` and
//! `agents::sm` as those ports' host interfaces to the same SMA and SM
//! stack.

pub mod agents;
pub mod check;
pub mod model;
pub mod proto;
pub mod run;
