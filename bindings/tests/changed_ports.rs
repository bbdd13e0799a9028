//! A switch told only which ports' inputs changed (`Changed::Ports`) behaves
//! exactly as one that reads every port in every cycle (`Changed::All`):
//! two models get the same inputs, cycle by cycle, and must give the same
//! outputs. The inputs cover what the sparse read has to get right: SMPs
//! (reference vector V1) arriving on several ports at once, a beat held
//! unchanged over consecutive cycles (a packet of zero bytes, which the
//! link receiver drops for its VCRC), idle ports, and links going down and
//! up. A changed-port index beyond the model's ports is an error.

use vl15_bindings::{
    Changed, Dev, DevIn, DevKind, Error, PortIn, DEV_DATA_WIDTHS, SWITCH_LFT_DEPTH,
};

const PORTS: usize = 8;
const CYCLES: usize = 4000;
/// ibspec §3.3 V1: a directed-route SubnGet(NodeInfo), LRH through VCRC.
const V1: &[u8] = include_bytes!("../../tests/vectors/V1_dr_get_nodeinfo.bin");

/// One beat: data words (little-endian), tkeep, tlast.
type Beat = ([u64; 2], u16, bool);

/// xorshift64: a fixed, seedable sequence (no dependency for a test).
struct Rng(u64);
impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
    fn one_in(&mut self, n: u64) -> bool {
        self.next() % n == 0
    }
}

/// `bytes` as beats of `w` bits.
fn beats(bytes: &[u8], w: u32) -> Vec<Beat> {
    let b = (w / 8) as usize;
    let chunks: Vec<&[u8]> = bytes.chunks(b).collect();
    let n = chunks.len();
    chunks
        .iter()
        .enumerate()
        .map(|(k, c)| {
            let mut le = [0u8; 16];
            le[..c.len()].copy_from_slice(c);
            let data = [
                u64::from_le_bytes(le[..8].try_into().expect("8 bytes")),
                u64::from_le_bytes(le[8..].try_into().expect("8 bytes")),
            ];
            let keep = ((1u32 << c.len()) - 1) as u16;
            (data, keep, k + 1 == n)
        })
        .collect()
}

fn new_switch(w: u32) -> Dev {
    let mut d = Dev::new(DevKind::Switch, PORTS as u32, w).expect("switch model");
    d.reset(4).expect("reset");
    d
}

#[test]
fn a_switch_told_the_changed_ports_matches_one_that_reads_all() {
    for w in DEV_DATA_WIDTHS {
        let smp = beats(V1, w);
        let zeros = beats(&[0u8; 96], w);
        let mut all = new_switch(w);
        let mut sparse = new_switch(w);
        let mut rng = Rng(0x9E37_79B9_7F4A_7C15 ^ u64::from(w));
        let idle = PortIn {
            link_up: true,
            tx_tready: true,
            ..PortIn::default()
        };
        let mut pin = vec![idle; PORTS];
        let mut prev = pin.clone();
        // Per port: the packet on the wire and its next beat.
        let mut sending: Vec<Option<(&[Beat], usize)>> = vec![None; PORTS];
        let i = DevIn {
            sma_rx_tready: true,
            sm_rx_tready: true,
            ..DevIn::default()
        };
        let (mut held, mut sparse_steps, mut delivered) = (0, 0, 0);
        for c in 0..CYCLES {
            for (p, pi) in pin.iter_mut().enumerate() {
                if sending[p].is_none() && pi.link_up && rng.one_in(40) {
                    let pkt: &[_] = if rng.one_in(4) { &zeros } else { &smp };
                    sending[p] = Some((pkt, 0));
                }
                // The last port's link goes down and comes back now and
                // then, between packets.
                if p == PORTS - 1 && sending[p].is_none() && rng.one_in(300) {
                    pi.link_up = !pi.link_up;
                }
                match sending[p] {
                    Some((pkt, k)) => {
                        let (data, keep, last) = pkt[k];
                        pi.rx_tdata = data;
                        pi.rx_tkeep = keep;
                        pi.rx_tlast = last;
                        pi.rx_tvalid = true;
                        sending[p] = if last { None } else { Some((pkt, k + 1)) };
                    }
                    None => {
                        pi.rx_tvalid = false;
                        pi.rx_tlast = false;
                    }
                }
            }
            let changed: Vec<u8> = (0..PORTS)
                .filter(|&p| pin[p] != prev[p])
                .map(|p| p as u8)
                .collect();
            held += (0..PORTS)
                .filter(|&p| pin[p].rx_tvalid && pin[p] == prev[p])
                .count();
            let sparse_in = if c == 0 {
                Changed::All
            } else {
                sparse_steps += 1;
                Changed::Ports(&changed)
            };
            let oa = all.step(&i, &pin, Changed::All).expect("step, all ports");
            let os = sparse
                .step(&i, &pin, sparse_in)
                .expect("step, changed ports");
            assert_eq!(os, oa, "DataW {w}, cycle {c}: management outputs differ");
            assert_eq!(
                sparse.ports_out(),
                all.ports_out(),
                "DataW {w}, cycle {c}: port outputs differ"
            );
            delivered += usize::from(oa.sma_rx_tvalid && oa.sma_rx_tlast);
            prev.clone_from(&pin);
        }
        // The inputs did what they are for.
        assert!(held > 100, "DataW {w}: only {held} held beats");
        assert!(
            delivered > 10,
            "DataW {w}: only {delivered} SMPs reached the SMA"
        );
        assert_eq!(sparse_steps, CYCLES - 1);
    }
}

#[test]
fn a_changed_port_beyond_the_model_is_an_error() {
    let mut d = new_switch(DEV_DATA_WIDTHS[0]);
    let pin = vec![PortIn::default(); PORTS];
    let r = d.step(&DevIn::default(), &pin, Changed::Ports(&[PORTS as u8]));
    assert!(
        matches!(r, Err(Error::PortIndex { index, ports }) if usize::from(index) == PORTS && ports == PORTS),
        "{r:?}"
    );
    // The model is still usable.
    d.step(&DevIn::default(), &pin, Changed::Ports(&[0]))
        .expect("a step naming a port it has");
}

#[test]
fn the_switch_model_has_the_lft_depth_the_crate_says() {
    // LFT_DEPTH (0x000A) reads the model's LftDepth parameter; the last
    // LFT word takes a write and reads it back, the one past it reads 0.
    let lft_word = |e: u16| 0x1000 + e / 4;
    for w in DEV_DATA_WIDTHS {
        let mut d = new_switch(w);
        let pin = vec![PortIn::default(); PORTS];
        let read = |d: &mut Dev, addr: u16| {
            let i = DevIn {
                reg_addr: addr,
                ..DevIn::default()
            };
            d.step(&i, &pin, Changed::All).expect("step").reg_rdata
        };
        assert_eq!(
            read(&mut d, 0x000A),
            u32::from(SWITCH_LFT_DEPTH),
            "DataW {w}"
        );
        let last = lft_word(SWITCH_LFT_DEPTH - 4);
        let i = DevIn {
            reg_we: true,
            reg_addr: last,
            reg_wdata: 0x0403_0201,
            ..DevIn::default()
        };
        d.step(&i, &pin, Changed::All).expect("write");
        assert_eq!(read(&mut d, last), 0x0403_0201, "DataW {w}");
        assert_eq!(read(&mut d, last + 1), 0, "DataW {w}: past the table");
    }
}
