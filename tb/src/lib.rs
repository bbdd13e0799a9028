//! vl15 testbench: drives real SMP traffic through the Verilated vl15 RTL.
//!
//! Layers, bottom up; a module imports only from its own layer and those
//! below it:
//! - [`proto`]: packets, MADs, CRCs, pcap, topology files;
//! - [`model`]: the Verilated devices, their drivers and register maps,
//!   the net that clocks them, traces;
//! - [`agents`]: SMAs, SM, QP0, GMP, discovery, the ibsim server;
//! - [`check`]: reference models, scoreboards, fault generators, the
//!   regression's scenarios, fuzzers;
//! - [`run`]: whole runs the CLI starts (replay, bench); the CLI's verbs
//!   are the binary's `cmd` modules, one file per verb.
//!
//! Every Verilated top is a `model::dut::Dut`: the switch, the multiport CA
//! and `ib_ca_top`. There is one SMA, `agents::node_sma::NodeSma` (ibsim's
//! answers, or a hardware HCA's in its HCA dialect), and one SM stack,
//! `agents::qp0::Transactions` under `agents::subnet_sm`. One scheduler
//! clocks every device: `model::net::Net`. It builds a fabric from a
//! topology file (`vl15 sim`, `discover`, `serve`), or takes devices the
//! testbench drives (`model::net::Driver`): a CA port on a bench
//! (`model::bench::PortBench`: `CaPort`'s stream drivers with
//! `agents::sma` and `agents::sm` as the port's host interfaces to the same
//! SMA and SM stack; the spine regression, replay, the CA soak) and the
//! switch soak's bench.

pub mod agents;
pub mod check;
pub mod model;
pub mod proto;
pub mod run;
