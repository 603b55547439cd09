//! Untorn writes through the CLI on the filesystem matrix: `fspace info`
//! reports the facts (text and JSON) with the state `statx` gives, `grow
//! --untorn` prepares space and checks it, `map --untorn` checks any file
//! (both refuse first, with the reason, where there are no untorn writes),
//! and bad units are refused without a change.

mod cli_common;
use fspace_test_kit as common;

use cli_common::*;

/// What the matrix's filesystems report on Linux 6.18 (docs/untorn.md).
fn expected(name: &str) -> &'static str {
    match name {
        "xfs" => "supported",
        "ext4" | "ext4-noextents" | "ext4-bigalloc" => "zero",
        _ => "not-reported",
    }
}

common::per_fs! {
    /// `info --json` carries the facts, the trials and four answers; the
    /// text says the same in words.
    fn info_reports_untorn_facts(fs) on [ext4, xfs, btrfs, ext4_noextents, tmpfs, sshfs, ext4_bigalloc] {
        let dir = fs.tempdir();
        let p = dir.path().to_str().unwrap();
        let o = fspace(&["info", "--json", p]);
        assert!(o.status.success(), "{}: {}", fs.name, text(&o));
        let v = json(&o);
        let u = &v["untorn"];
        let state = u["filesystem"]["limits"]["state"].as_str().unwrap_or("");
        assert_eq!(state, expected(&fs.name), "{}: {u}", fs.name);
        assert_eq!(u["filesystem"]["tried"].as_array().map(Vec::len), Some(6), "{u}");
        let answers = u["answers"].as_array().expect("answers");
        assert_eq!(answers.len(), 4, "{u}");
        for a in answers {
            let yes = fs.name == "xfs" && a["io"] == "direct";
            assert_eq!(a["untorn"], yes, "{}: {a}", fs.name);
            assert!(!a["reason"].as_str().unwrap_or("").is_empty());
        }
        let t = fspace(&["info", p]);
        let out = text(&t);
        assert!(out.contains("untorn writes (statx and RWF_ATOMIC"), "{out}");
        assert!(out.contains("16 KiB pages  direct"), "{out}");
        let words = match state {
            "supported" => "supported: unit",
            "zero" => "reported as 0",
            _ => "not reported",
        };
        assert!(out.contains(words), "{}: {out}", fs.name);
        // A regular file gets its own limits too.
        let f = dir.path().join("f");
        std::fs::write(&f, b"x").unwrap();
        let v = json(&fspace(&["info", "--json", f.to_str().unwrap()]));
        assert_eq!(v["untorn"]["file"]["limits"]["state"], state, "{}", fs.name);
        assert_eq!(v["untorn"]["file"]["scratch"], false);
    }
}

common::per_fs! {
    /// Where the filesystem takes no untorn writes, `grow --untorn` and
    /// `map --untorn` say so first and fail (EOPNOTSUPP, with the reason),
    /// never "all units aligned"; nothing is created. The probe says it in
    /// one line, with the reason.
    fn untorn_refused_where_there_are_none(fs) on [ext4, btrfs, ext4_noextents, tmpfs, sshfs, ext4_bigalloc] {
        let dir = fs.tempdir();
        let f = dir.path().join("pages");
        let fp = f.to_str().unwrap();
        let o = fspace(&["grow", "--create", "--untorn", "16K", fp, "1M"]);
        assert_eq!(o.status.code(), Some(1), "{}: {}", fs.name, text(&o));
        let out = text(&o);
        assert!(out.contains("takes no untorn writes"), "{}: {out}", fs.name);
        assert!(out.contains("statx"), "{}: the reason: {out}", fs.name);
        assert!(!out.contains("aligned"), "{}: {out}", fs.name);
        assert!(!f.exists(), "{}", fs.name);
        let o = fspace(&["grow", "--create", "--json", "--untorn", "16K", fp, "1M"]);
        assert_eq!(o.status.code(), Some(1), "{}: {}", fs.name, text(&o));
        let v = json(&o);
        assert_eq!(v["errno"], 95, "{}: {v}", fs.name);
        assert!(v["error"].as_str().unwrap().contains("takes no untorn writes"), "{v}");
        // A file to map: written log space, without the unit.
        let o = fspace(&["grow", "--create", "--for", "log", fp, "1M"]);
        assert!(o.status.success(), "{}", text(&o));
        let o = fspace(&["map", "--untorn", "16K", fp]);
        assert_eq!(o.status.code(), Some(1), "{}: {}", fs.name, text(&o));
        let out = text(&o);
        assert!(out.contains("takes no untorn writes"), "{}: {out}", fs.name);
        assert!(!out.contains("all 64 units"), "{}: {out}", fs.name);
        if fs.name == "ext4" {
            let p = dir.path().join("probe");
            std::fs::create_dir(&p).unwrap();
            let o = fspace(&["probe", "--quick", "--quiet", p.to_str().unwrap()]);
            assert!(o.status.success(), "{}", text(&o));
            let out = String::from_utf8_lossy(&o.stdout).into_owned();
            let at = out.find("\nUntorn writes").expect("the untorn section");
            let section: Vec<&str> = out[at + 1..].lines().take_while(|l| !l.is_empty()).collect();
            assert_eq!(
                section,
                ["Untorn writes: none here (statx reports no untorn unit for files)"],
                "{out}"
            );
            assert!(!out.contains("no (buffered)"), "{out}");
        }
    }
}

common::per_fs! {
    /// `grow --untorn 16K` prepares space and checks it; on XFS every unit
    /// passes and the hint is the unit; `map --untorn` agrees.
    fn grow_and_map_untorn(fs) on [xfs] {
        let dir = fs.tempdir();
        let f = dir.path().join("pages");
        let fp = f.to_str().unwrap();
        let o = fspace(&["grow", "--create", "--sync", "--json", "--untorn", "16K", fp, "2M"]);
        assert!(o.status.success(), "{}", text(&o));
        let v = json(&o);
        assert_eq!(v["intent"], "log", "{v}");
        let u = &v["untorn"];
        assert_eq!(u["unit"], 16384);
        assert_eq!(u["layout"]["units"], 128, "{u}");
        assert_eq!(u["layout"]["ok"], 128, "{}: {u}", fs.name);
        if fs.name == "xfs" {
            assert_eq!(u["extent_size_hint"], 16384, "{u}");
            assert_eq!(u["limits"]["state"], "supported");
        }
        let m = fspace(&["map", "--summary", "--untorn", "16K", fp]);
        assert!(text(&m).contains("all 128 units of 16 KiB lie in one written extent"), "{}", text(&m));
        let v = json(&fspace(&["map", "--json", "--untorn", "4K", fp]));
        assert_eq!(v["untorn"]["ok"], 512, "{v}");
    }
}

common::per_fs! {
    /// A unit that is not a power of two is a usage error, and the file is
    /// not created.
    fn bad_units_change_nothing(fs) on [xfs] {
        let dir = fs.tempdir();
        let f = dir.path().join("never");
        let fp = f.to_str().unwrap();
        for unit in ["3K", "100", "2G", "x"] {
            let o = fspace(&["grow", "--create", "--untorn", unit, fp, "1M"]);
            assert_eq!(o.status.code(), Some(2), "{unit}: {}", text(&o));
            assert!(text(&o).contains("--untorn"), "{}", text(&o));
            assert!(!f.exists());
        }
        let o = fspace(&["map", "--untorn", "16K", fp]);
        assert_eq!(o.status.code(), Some(1), "{}", text(&o));
        assert!(text(&o).contains("never"), "{}", text(&o));
    }
}
