//! The RTL and how it is clocked: stream drivers with idle and backpressure
//! patterns (`stream`), the register maps the RTL decodes (`regmap`),
//! every Verilated top behind one interface (`dut`), one CA port with its
//! drivers (`device`), such ports joined by links
//! (`fabric`), a fabric of RTL switches and multiport CAs from a topology
//! file, scheduled by events (`net`), and packet traces (`trace`).
//!
//! The fabrics run agents they do not name: `fabric::Fabric` serves any
//! `device::HostAgent` on a port's host side, and `net::Net` any
//! `node_hw::NodeAgent` on a node's management side. The agents are one
//! layer up.

pub mod device;
pub mod dut;
pub mod fabric;
pub mod net;
pub mod node_hw;
pub mod regmap;
pub mod stream;
pub mod trace;
