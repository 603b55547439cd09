//! Every `FromStr` of the library fails with a `ParseError`: what was
//! parsed, the text and the names accepted as values, and the same in its
//! text; `validate()` fails with an `InvalidOption` naming the field.

use fspace::wal::WalOptions;
use fspace::{CopyOptions, ReflinkMode, SparseMode, Strategy};

#[test]
fn parse_errors_are_values() {
    let e = "fast".parse::<Strategy>().unwrap_err();
    assert_eq!((e.what, e.input.as_str()), ("strategy", "fast"));
    assert!(e.expected.contains(&"zero-fill"), "{e:?}");
    assert_eq!(
        e.to_string(),
        "unknown strategy \"fast\" (sparse, reserve, allocate, write-zeroes, zero-fill)"
    );
    let e = "x".parse::<SparseMode>().unwrap_err();
    assert_eq!((e.what, e.expected.len()), ("sparse mode", 3));
    let e = "x".parse::<fspace::bench::SpaceState>().unwrap_err();
    assert_eq!(e.what, "mode");
    assert!(e.expected.contains(&"appended"), "{e:?}");
    let e = "mysql".parse::<fspace::probe::Engine>().unwrap_err();
    assert_eq!(e.expected, ["postgresql", "mariadb", "rocksdb"]);
    let e = "zfs".parse::<fspace::crashtest::Model>().unwrap_err();
    assert_eq!(
        (e.what, e.expected),
        ("crash model", vec!["posix", "ext4", "xfs", "btrfs"])
    );
}

/// Over the public API's inventory (docs/public-api.txt): every `FromStr`
/// fails with `ParseError`, except `Size`, whose `SizeError` says what is
/// wrong in the number or its unit rather than listing names.
#[test]
fn every_from_str_fails_with_parse_error() {
    let file = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../docs/public-api.txt");
    let inventory = std::fs::read_to_string(&file).expect("read docs/public-api.txt");
    let errs: Vec<&str> = inventory
        .lines()
        .filter(|l| l.starts_with("pub type ") && l.contains("::Err = "))
        .collect();
    assert!(errs.len() >= 10, "{errs:?}");
    for l in errs {
        assert!(
            l.ends_with("= fspace::ParseError")
                || l == "pub type fspace::Size::Err = fspace::SizeError",
            "a FromStr that does not fail with fspace::ParseError: {l}"
        );
    }
}

#[test]
fn invalid_options_name_the_field() {
    let o = WalOptions::default().segment_size(1000);
    let e = o.validate().unwrap_err();
    assert_eq!(e.option, "segment_size");
    assert!(e.message.contains("64 KiB"), "{e}");
    let c = CopyOptions::default()
        .reflink(ReflinkMode::Always)
        .sparse(SparseMode::Never);
    assert_eq!(c.validate().unwrap_err().option, "sparse");
}
