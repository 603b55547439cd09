//! `fspace copy` beside the real GNU `cp` on every filesystem of the matrix:
//! the default copy is at least as sparse as `cp`'s default, `--sparse
//! always` at least as sparse as `cp --sparse=always`, both byte-identical,
//! and neither issues more write-type syscalls than `cp` (counted by
//! strace). (Speed is not tested here: bench/copy.py measures it.)

use fspace_test_kit as common;

use std::os::unix::fs::{FileExt, MetadataExt};
use std::path::Path;
use std::process::Command;

const MIB: u64 = 1 << 20;

/// A VM-image-like file: 8 MiB written, one 4 KiB data block in eight and
/// zeros between, then 8 MiB of hole.
fn make_vm(p: &Path) {
    let f = std::fs::File::create(p).unwrap();
    let mut buf = vec![0u8; 8 * MIB as usize];
    let data = common::random_bytes(11, buf.len() / 8);
    for (i, blk) in data.chunks(4096).enumerate() {
        let at = i * 32768 + (i % 8) * 4096;
        buf[at..at + 4096].copy_from_slice(blk);
    }
    f.write_all_at(&buf, 0).unwrap();
    f.set_len(16 * MIB).unwrap();
    f.sync_all().unwrap();
}

fn allocated(p: &Path) -> u64 {
    std::fs::File::open(p).unwrap().sync_all().unwrap();
    std::fs::metadata(p).unwrap().blocks() * 512
}

fn run(cmd: &[&str]) {
    let o = Command::new(cmd[0]).args(&cmd[1..]).output().unwrap();
    assert!(o.status.success(), "{cmd:?}: {}", common::output_text(&o));
}

/// Write-type syscalls of `cmd` (strace -f -c).
fn write_calls(cmd: &[&str], dir: &Path) -> u64 {
    let log = dir.join("strace.txt");
    let o = Command::new("strace")
        .args(["-f", "-c", "-o"])
        .arg(&log)
        .args(cmd)
        .output()
        .expect("strace (installed by ci/matrix.sh deps)");
    assert!(o.status.success(), "{cmd:?}: {}", common::output_text(&o));
    let text = std::fs::read_to_string(&log).unwrap();
    std::fs::remove_file(&log).unwrap();
    text.lines()
        .filter_map(|l| {
            let f: Vec<&str> = l.split_whitespace().collect();
            let name = *f.last()?;
            let writes = [
                "write",
                "pwrite64",
                "pwritev",
                "pwritev2",
                "writev",
                "fallocate",
                "ftruncate",
                "copy_file_range",
            ];
            (f.len() >= 5 && writes.contains(&name))
                .then(|| f[3].parse::<u64>().ok())
                .flatten()
        })
        .sum()
}

common::per_fs! {
    fn default_and_always_are_at_least_as_sparse_as_cp(fs) on [ext4, xfs, btrfs, ext4_noextents, tmpfs] {
        let _g = fs.lock();
        let dir = fs.tempdir();
        let d = dir.path();
        let src = d.join("vm.img");
        make_vm(&src);
        let p = |n: &str| d.join(n).to_str().unwrap().to_string();
        let s = src.to_str().unwrap();
        let fspace = env!("CARGO_BIN_EXE_fspace");
        for (cp_args, fs_args, what) in [
            (vec![], vec![], "default"),
            (
                vec!["--sparse=always", "--reflink=never"],
                vec!["--sparse", "always", "--reflink", "never"],
                "always",
            ),
        ] {
            let (a, b) = (p(&format!("cp-{what}")), p(&format!("fspace-{what}")));
            let mut cp = vec!["cp"];
            cp.extend(&cp_args);
            cp.extend([s, a.as_str()]);
            run(&cp);
            let mut fsp = vec![fspace, "copy"];
            fsp.extend(&fs_args);
            fsp.extend([s, b.as_str()]);
            run(&fsp);
            assert_eq!(common::read(Path::new(&a)), common::read(Path::new(&b)));
            let (ca, fa) = (allocated(Path::new(&a)), allocated(Path::new(&b)));
            assert!(fa <= ca, "{} {what}: fspace allocated {fa}, cp {ca}", fs.name);
            // Syscalls: at most cp's, fspace's one `write` of its report to
            // stdout aside.
            std::fs::remove_file(&a).unwrap();
            std::fs::remove_file(&b).unwrap();
            let cw = write_calls(&cp, d);
            let fw = write_calls(&fsp, d);
            assert!(fw <= cw + 1, "{} {what}: fspace {fw} write-type syscalls, cp {cw}", fs.name);
            std::fs::remove_file(&a).unwrap();
            std::fs::remove_file(&b).unwrap();
        }
    }
}
