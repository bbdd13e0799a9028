//! `VL15_TRACE=<path>` makes every `Ca::new` open an FST dump: the first
//! instance writes `<path>`, the next ones `<path>.<n>`. Its own test binary,
//! because the variable is process-wide.

use vl15_bindings::{Ca, CaIn};

#[test]
fn env_var_traces_every_instance() {
    let dir = std::env::temp_dir().join(format!("vl15_bindings_env_{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("tmp dir");
    let path = dir.join("w.fst");
    std::env::set_var("VL15_TRACE", &path);
    {
        let mut a = Ca::new(64).expect("model a");
        let mut b = Ca::new(128).expect("model b");
        a.reset(2).expect("reset");
        b.reset(2).expect("reset");
        for _ in 0..100 {
            a.step(&CaIn::default()).expect("step");
            b.step(&CaIn::default()).expect("step");
        }
    } // dropping closes (and flushes) the dumps
    std::env::remove_var("VL15_TRACE");
    for p in [path.clone(), dir.join("w.fst.1")] {
        let bytes = std::fs::read(&p).unwrap_or_else(|e| panic!("{}: {e}", p.display()));
        assert!(!bytes.is_empty(), "{} is empty", p.display());
        // FST files open with a header block: block type 0 (FST_BL_HDR).
        assert_eq!(
            bytes[0],
            0,
            "{} does not start with an FST header block",
            p.display()
        );
        // Header: type, length (u64), start time, end time (u64 BE), ...,
        // timescale exponent (i8) at byte 73. 10 ns clock, two samples per
        // cycle: 2 reset + 100 cycles end with the high half of cycle 101 at
        // 1015 ns.
        let u64_at = |o: usize| u64::from_be_bytes(bytes[o..o + 8].try_into().expect("8 bytes"));
        let scale = bytes[73] as i8;
        assert!(scale <= -9, "timescale 1e{scale} s is coarser than 1 ns");
        let per_ns = 10u64.pow(u32::from((-9 - scale) as u8));
        assert_eq!(u64_at(9), 0, "start time");
        assert_eq!(
            u64_at(17),
            1015 * per_ns,
            "end time (timescale 1e{scale} s)"
        );
    }
    let _ = std::fs::remove_dir_all(&dir);
}
