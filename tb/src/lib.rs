//! vl15 testbench: drives real SMP traffic through the Verilated vl15 RTL.
//!
//! Layers, bottom up: `packet`, `crc`, `pcap` (bytes on the wire);
//! `stream` (idle/backpressure drivers); `device` (one `ib_ca_top` with its
//! drivers); `sma`, `sm` (host-side agents); `net` (a fabric of
//! RTL switches and CAs), `qp0`, `subnet_sm`, `routing`, `simrun` (the
//! built-in SM and `vl15 sim`); `fabric` (ports joined by
//! links); `topology` (ibnetdiscover/ibsim fabric files); `scenario`,
//! `replay`, `bench` (what the CLI runs); `decode`, `trace`, `tshark`
//! (traces).

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
