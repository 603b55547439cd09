//! Figures that cannot be known are printed as unknown (text) and null
//! (JSON), never as numbers: allocation and holes on sshfs, where
//! `st_blocks` is size/512 and `SEEK_HOLE` sees no holes.

use fspace_test_kit as common;

use common::output_text as text;
use std::process::{Command, Output};

fn fspace(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_fspace"))
        .args(args)
        .output()
        .expect("run fspace")
}

fn json(o: &Output) -> serde_json::Value {
    serde_json::from_slice(&o.stdout).unwrap_or_else(|e| panic!("not JSON ({e}): {}", text(o)))
}

common::per_fs! {
    fn map_dig_and_info_say_unknown_where_st_blocks_is_made_up(fs) on [ext4, sshfs] {
        let dir = fs.tempdir();
        let p = dir.path().join("holes");
        let ps = p.to_str().unwrap();
        // 1 MiB of data, then a 7 MiB hole.
        std::fs::write(&p, vec![7u8; 1 << 20]).unwrap();
        std::fs::OpenOptions::new().write(true).open(&p).unwrap().set_len(8 << 20).unwrap();
        let remote = fs.name == "sshfs";

        let o = fspace(&["map", "--json", "--summary", ps]);
        assert!(o.status.success(), "{}: {}", fs.name, text(&o));
        let s = &json(&o)["summary"];
        if remote {
            assert!(s["allocated"].is_null(), "{}: {s}", fs.name);
            assert!(s["holes"].is_null(), "{}: {s}", fs.name);
            let t = text(&fspace(&["map", "--summary", ps]));
            assert!(t.contains("allocated:  unknown"), "{t}");
            assert!(t.contains("holes:      unknown"), "{t}");
        } else {
            assert_eq!(s["holes"], 7 << 20, "{}: {s}", fs.name);
            assert!(s["allocated"].as_u64().is_some(), "{}: {s}", fs.name);
        }

        let o = fspace(&["info", "--json", dir.path().to_str().unwrap()]);
        assert!(o.status.success(), "{}: {}", fs.name, text(&o));
        let v = json(&o);
        assert_eq!(v["st_blocks_measures_allocation"], !remote, "{}: {v}", fs.name);
        assert_eq!(v["allocation_unit"].is_null(), remote, "{}: {v}", fs.name);

        let o = fspace(&["dig", "--json", ps]);
        if remote {
            // sshfs cannot punch: the dig fails and says nothing changed.
            assert_eq!(o.status.code(), Some(1), "{}", text(&o));
            assert!(text(&o).contains("nothing was changed"), "{}", text(&o));
        } else {
            assert!(o.status.success(), "{}: {}", fs.name, text(&o));
            let v = json(&o);
            assert_eq!(v["allocation_unit"]["bytes"], 4096, "{v}");
            assert!(v["bytes_freed"].as_u64().is_some(), "{v}");
        }
    }
}
