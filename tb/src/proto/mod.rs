//! What travels on the wire and what sits in files: packets and their
//! headers and attributes, MADs, the ICRC and VCRC, pcap files and their
//! text form, tshark, the ibnetdiscover topology format (with the fat
//! trees `vl15 fattree` writes), the state file `vl15 sim --dump-state`
//! writes and what ibroute and ibtracert would print from it. Nothing here
//! knows the RTL.

pub mod crc;
pub mod decode;
pub mod fattree;
pub mod mad;
pub mod packet;
pub mod pcap;
pub mod routes;
pub mod state;
pub mod topology;
pub mod tshark;

/// Input a user gave that cannot be used: an argument, or a file's
/// content, named in the message (`file:line: …` where there is a line).
/// The CLI exits with status 2 on it, as on a [`pcap::PcapError`] or a
/// [`topology::TopologyError`].
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub struct InputError(pub String);
