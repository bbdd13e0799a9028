//! AFL++ harness: the first input byte picks the parser (packet, pcap,
//! topology), the rest is its input. The parser sources are the crate's
//! own (`tb/src`), compiled here without the RTL bindings. Properties: no
//! panic; a parsed packet re-encodes to its bytes (every wire bit is a
//! field). The richer properties and the generators are in tb/src/check/fuzz.rs
//! (`vl15 fuzz`).
#![allow(dead_code, unused_imports)]

// The sources name each other by their place in the crate (`crate::proto::…`),
// so they sit in a `proto` module here too, read from the crate's folder.
#[path = "../../../tb/src/proto"]
mod proto {
    pub mod crc;
    pub mod packet;
    pub mod pcap;
    pub mod topology;
}

use proto::{packet, pcap, topology};

fn main() {
    afl::fuzz!(|data: &[u8]| {
        let Some((&which, rest)) = data.split_first() else {
            return;
        };
        match which % 3 {
            0 => {
                if let Ok(p) = packet::Packet::parse(rest) {
                    assert_eq!(p.to_bytes(), rest, "parse → to_bytes changed the bytes");
                    let _ = p.decode_smp();
                }
            }
            1 => {
                let _ = pcap::parse_pcap(rest);
            }
            _ => {
                let text = String::from_utf8_lossy(rest);
                let _ = topology::Topology::parse(&text, std::path::Path::new("afl.net"));
            }
        }
    });
}
