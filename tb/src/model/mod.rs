//! The RTL and how it is clocked: stream drivers with idle and backpressure
//! patterns (`stream`), the register maps the RTL decodes (`regmap`),
//! every Verilated top behind one interface (`dut`), the drivers of one CA
//! port (`device`), the one scheduler: a net of RTL devices joined by
//! links, built from a topology file or device by device, scheduled by
//! events (`net`), a CA port on a bench as a device of a net (`bench`),
//! packet traces (`trace`), faults on cables (`wirefault`), and the SMA's method × attribute × routing ×
//! outcome cells of a coverage run (`cells`).
//!
//! The net runs agents it does not name: `node_hw::NodeAgent` on a
//! topology node's management side, and, on a bench port's host side, any
//! `device::HostAgent`. The agents are one layer up.

pub mod bench;
pub mod cells;
pub mod device;
pub mod dut;
pub mod held;
pub mod lockstep;
pub mod net;
pub mod node_hw;
pub mod record;
pub mod regmap;
pub mod stream;
pub mod trace;
pub mod twin;
pub mod wirefault;

/// This thread's user + system CPU seconds (`CLOCK_THREAD_CPUTIME_ID`).
pub fn thread_cpu_s() -> Option<f64> {
    use nix::time::{clock_gettime, ClockId};
    let t = clock_gettime(ClockId::CLOCK_THREAD_CPUTIME_ID).ok()?;
    Some(t.tv_sec() as f64 + t.tv_nsec() as f64 * 1e-9)
}
