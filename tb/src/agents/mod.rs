//! Software that drives the RTL as a host, an SMA or an SM would:
//! - the host side of a CA port on a bench: its SMA (`sma`) and SM driver
//!   (`sm`); `sm::Bench` is such a port with them, the driver of a device
//!   of a net;
//! - every node's SMA in a fabric (`node_sma`, answering as ibsim's does);
//!   `node_sma::Net` is the fabric with it on every node;
//! - the SM stack: QP0 (`qp0`), the subnet manager (`subnet_sm`) with its
//!   routing (`routing`), `vl15 sim`'s runs (`simrun`, `simscenario`), and
//!   discovery as ibnetdiscover walks (`discover`);
//! - QP1 (`gmp`: the PMA, SA and key checks);
//! - the ibsim protocol, as its client (`ibsim`) and as the server OpenSM
//!   connects to (`serve`).

pub mod console;
pub mod discover;
pub mod gmp;
pub mod ibsim;
pub mod node_sma;
pub mod qp0;
pub mod routing;
pub mod serve;
pub mod simrun;
pub mod simscenario;
pub mod sm;
pub mod sma;
pub mod subnet_sm;
pub mod umad_classes;
