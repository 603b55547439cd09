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
