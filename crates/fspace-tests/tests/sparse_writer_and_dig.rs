//! The sparse writer (holes for zero blocks, coalesced writes, a byte
//! model) and `dig` on the filesystem matrix.

mod copy_common;
use fspace_test_kit as common;

use copy_common::{make, Case, MIB};
use fspace::{dig, DigOptions, SparseWriter, SparseWriterOptions};
use std::os::fd::AsFd;

common::per_fs! {
    /// The writer: content equals a byte model for any split of writes, skips
    /// and offsets; zero blocks become holes; writes are coalesced.
    fn sparse_writer_matches_a_model_and_makes_holes(fs) {
        use proptest::prelude::*;
        use proptest::test_runner::{Config, TestRunner};
        let _g = fs.lock();
        let dir = fs.tempdir();
        let mut runner = TestRunner::new(Config {
            cases: if fs.name == "sshfs" { 8 } else { 24 },
            failure_persistence: None,
            ..Config::default()
        });
        let seq = std::cell::Cell::new(0u32);
        let strategy = (
            proptest::collection::vec((0u8..5, 1usize..40_000), 1..30),
            any::<bool>(),
            any::<bool>(),
        );
        runner
            .run(&strategy, |(pieces, existing, detect)| {
                seq.set(seq.get() + 1);
                let p = dir.path().join(format!("w{}", seq.get()));
                // An existing file full of data (holes must be punched), or a fresh one.
                if existing {
                    std::fs::write(&p, vec![0xeeu8; 700_000]).unwrap();
                }
                let f = std::fs::OpenOptions::new()
                    .write(true)
                    .create(true)
                    .truncate(false)
                    .open(&p)
                    .unwrap();
                let opts = SparseWriterOptions::default().detect_zeros(detect).buffer_size(64 << 10);
                let mut w = SparseWriter::new(f.as_fd(), &p, opts).unwrap();
                let mut model: Vec<u8> = Vec::new();
                for (i, (kind, len)) in pieces.iter().enumerate() {
                    match kind {
                        0 => {
                            let d = common::random_bytes(i as u64, *len);
                            w.write(&d).unwrap();
                            model.extend_from_slice(&d);
                        }
                        1 => {
                            w.write(&vec![0u8; *len]).unwrap();
                            model.resize(model.len() + len, 0);
                        }
                        2 => {
                            w.skip(*len as u64).unwrap();
                            model.resize(model.len() + len, 0);
                        }
                        4 => {
                            // Forward past the end: the gap reads as zeros,
                            // also where the file held data before.
                            let to = model.len() + len;
                            w.seek(to as u64).unwrap();
                            model.resize(to, 0);
                        }
                        _ => {
                            // Back to an earlier offset and overwrite.
                            let at = model.len() / 2;
                            let d = common::random_bytes(100 + i as u64, (*len).min(5000));
                            w.write_at(at as u64, &d).unwrap();
                            if model.len() < at + d.len() {
                                model.resize(at + d.len(), 0);
                            }
                            model[at..at + d.len()].copy_from_slice(&d);
                            w.seek(model.len() as u64).unwrap();
                        }
                    }
                }
                let stats = w.finish().unwrap();
                drop(f);
                let got = std::fs::read(&p).unwrap();
                prop_assert_eq!(got.len(), model.len());
                prop_assert!(got == model, "content differs from the model");
                prop_assert!(stats.bytes_written <= model.len() as u64 + 700_000);
                std::fs::remove_file(&p).unwrap();
                Ok(())
            })
            .unwrap_or_else(|e| panic!("{}: {e}", fs.name));
    }
}

common::per_fs! {
    fn sparse_writer_coalesces_small_writes_and_leaves_holes(fs) {
        let _g = fs.lock();
        let dir = fs.tempdir();
        let p = dir.path().join("w");
        let f = std::fs::File::create(&p).unwrap();
        let mut w = SparseWriter::new(f.as_fd(), &p, SparseWriterOptions::default()).unwrap();
        // rsync's pattern: 1 KiB at a time. 8 MiB data, 8 MiB zeros, 8 MiB data.
        let data = common::random_bytes(77, 8 * MIB as usize);
        let before = fspace::internals::counters();
        for part in [&data[..], &vec![0u8; 8 * MIB as usize][..], &data[..]] {
            for c in part.chunks(1024) {
                w.write(c).unwrap();
            }
        }
        let s = w.finish().unwrap();
        let writes = fspace::internals::counters().since(before).writes;
        assert_eq!(s.bytes_written, 16 * MIB, "{}: {s:?}", fs.name);
        assert!(
            s.write_calls <= 17 && writes <= 20,
            "{}: {} pwritev, {writes} write-type calls for 16 MiB in 1 KiB pieces",
            fs.name,
            s.write_calls
        );
        assert_eq!(s.holes, 1);
        assert_eq!(s.hole_bytes, 8 * MIB);
        drop(f);
        let mut model = data.clone();
        model.resize(16 * MIB as usize, 0);
        model.extend_from_slice(&data);
        assert!(common::read(&p) == model, "{}: content", fs.name);
        if !fs.is(&["sshfs"]) {
            let f = std::fs::File::open(&p).unwrap();
            let hole = rustix::fs::seek(&f, rustix::fs::SeekFrom::Hole(0)).unwrap();
            assert_eq!(hole, 8 * MIB, "{}: the zeros are a hole", fs.name);
            assert!(common::allocated(&p) < 17 * MIB, "{}", fs.name);
        }
    }
}

common::per_fs! {
    fn dig_frees_zero_blocks_and_keeps_the_bytes(fs) {
        let _g = fs.lock();
        let dir = fs.tempdir();
        let p = make(dir.path(), Case::VmImage);
        let z = make(dir.path(), Case::AllZeros);
        let u = make(dir.path(), Case::Unaligned);
        for file in [&p, &z, &u] {
            let before = common::read(file);
            let alloc = common::allocated(file);
            match dig(file, &DigOptions::default()) {
                Ok(r) => {
                    assert_ne!(fs.name, "sshfs", "sshfs has no hole punching");
                    assert!(
                        common::read(file) == before,
                        "{}: dig changed bytes",
                        fs.name
                    );
                    let after = common::allocated(file);
                    assert!(after <= alloc, "{}: {alloc} -> {after}", fs.name);
                    if file == &z {
                        assert_eq!(r.bytes_punched, 4 * MIB, "{}: {r:?}", fs.name);
                        assert!(after < 64 << 10, "{}: {after}", fs.name);
                    }
                    if file == &p {
                        assert!(r.holes_punched > 20, "{}: {r:?}", fs.name);
                        assert!(r.bytes_freed.is_some_and(|f| f > MIB), "{}: {r:?}", fs.name);
                    }
                    // Digging again finds nothing more.
                    let again = dig(file, &DigOptions::default()).unwrap();
                    assert_eq!(again.bytes_punched, 0, "{}: {again:?}", fs.name);
                }
                Err(e) => {
                    assert_eq!(fs.name, "sshfs", "{e}");
                    assert_eq!(e.raw_os_error(), Some(95), "{e}");
                    assert!(e.to_string().contains("nothing was changed"), "{e}");
                    assert!(common::read(file) == before);
                }
            }
        }
        let e = dig(dir.path().join("missing"), &DigOptions::default()).unwrap_err();
        assert_eq!(e.raw_os_error(), Some(2));
        let e = dig(dir.path(), &DigOptions::default()).unwrap_err();
        assert!(e.to_string().contains("directory"), "{e}");
    }
}

#[test]
fn sparse_writer_refuses_append_descriptors_and_impossible_offsets() {
    let fs = &common::all()[0];
    let dir = fs.tempdir();
    let p = dir.path().join("a");
    std::fs::write(&p, b"x").unwrap();
    let f = std::fs::OpenOptions::new().append(true).open(&p).unwrap();
    let e = SparseWriter::new(f.as_fd(), &p, SparseWriterOptions::default())
        .err()
        .expect("O_APPEND refused");
    assert_eq!(e.raw_os_error(), Some(22), "{e}");
    assert!(e.to_string().contains("O_APPEND"), "{e}");
    let f = std::fs::OpenOptions::new().write(true).open(&p).unwrap();
    let mut w = SparseWriter::new(f.as_fd(), &p, SparseWriterOptions::default()).unwrap();
    let e = w.write_at(u64::MAX - 3, b"12345").unwrap_err();
    assert_eq!(e.raw_os_error(), Some(27), "{e}");
    let e = w.skip(u64::MAX).unwrap_err();
    assert_eq!(e.raw_os_error(), Some(27), "{e}");
    // The refused calls changed nothing; the writer describes the whole
    // file, and nothing was written: finish leaves it empty.
    w.finish().unwrap();
    assert_eq!(common::read(&p), b"");
}
