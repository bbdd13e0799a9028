//! vl15 testbench: drives real SMP traffic through the Verilated vl15 RTL.
//!
//! Layers, bottom up:
//! - wire and files: `packet`, `crc`, `mad`, `pcap`, `decode`, `tshark`,
//!   `topology`, `fattree`;
//! - the RTL's register maps: `regmap`;
//! - devices: `stream` (idle/backpressure drivers), `device` (one
//!   `ib_ca_top` port with its drivers), `fabric` (such ports joined by
//!   links, each with an optional checker), `net` (a fabric of RTL switches
//!   and multiport CAs from a topology file, event-driven), `trace`;
//! - agents: `sma`, `sm` (the one-port CA's SMA and SM driver, used with
//!   `fabric`), `node_sma` (every node's SMA in a `net`), `qp0`,
//!   `subnet_sm`, `routing`, `simrun`, `simscenario` (the built-in SM and
//!   `vl15 sim`), `gmp`, `discover`, `serve`, `ibsim`, `board`;
//! - checks: `refmodel`, `scoreboard`, `faults`, `scenario` (the
//!   regression), `fuzz`, `hostile`;
//! - what the CLI runs: `replay`, `bench`, `netbench` (the verbs
//!   themselves are in the binary's `cmd` modules).
//!
//! Two device stacks exist side by side: `device`/`fabric`/`sma`/`sm` on
//! one `ib_ca_top` port at DataW 32, 64 and 128 (the spine regression,
//! replay, the CA soak), and `net`/`node_sma`/`qp0`/`subnet_sm` on the
//! switch and multiport CA at DataW 64 and 128 (every fabric, `vl15
//! serve`). New fabric behaviour goes into the second; the first stays
//! for the single-port CA until both run on one device abstraction. Until
//! then two imports run up a layer: `fabric` holds a port's `sma` and `sm`,
//! and `net` holds every node's `node_sma`.

pub mod bench;
pub mod board;
pub mod crc;
pub mod decode;
pub mod device;
pub mod discover;
pub mod fabric;
pub mod fattree;
pub mod faults;
pub mod fuzz;
pub mod gmp;
pub mod hostile;
pub mod ibsim;
pub mod mad;
pub mod net;
pub mod netbench;
pub mod node_hw;
pub mod node_sma;
pub mod packet;
pub mod pcap;
pub mod qp0;
pub mod refmodel;
pub mod regmap;
pub mod replay;
pub mod routing;
pub mod scenario;
pub mod scoreboard;
pub mod serve;
pub mod simrun;
pub mod simscenario;
pub mod sm;
pub mod sma;
pub mod stream;
pub mod subnet_sm;
pub mod topology;
pub mod trace;
pub mod tshark;
