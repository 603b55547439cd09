//! What a registry would receive: each publishable crate's package holds its
//! sources and nothing of the repository's tests, loop images or benchmark
//! results, and no manifest points at a placeholder address. (`ci/test.sh`
//! also builds the packages with `cargo package`, which compiles each one
//! from its tarball.)

use std::path::Path;
use std::process::Command;

fn cargo(args: &[&str]) -> String {
    let scratch = tempfile::tempdir().expect("tempdir");
    let out = Command::new(env!("CARGO"))
        .args(args)
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        // Not the target directory `cargo test` holds locked.
        .env("CARGO_TARGET_DIR", scratch.path())
        .output()
        .expect("run cargo");
    assert!(
        out.status.success(),
        "cargo {args:?} failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).expect("cargo output is UTF-8")
}

/// The workspace's packages that may be published, with their directories.
fn publishable() -> Vec<(String, String)> {
    let meta: serde_json::Value =
        serde_json::from_str(&cargo(&["metadata", "--no-deps", "--format-version", "1"]))
            .expect("cargo metadata is JSON");
    let packages = meta["packages"].as_array().expect("packages");
    packages
        .iter()
        // `publish = false` is an empty list of registries.
        .filter(|p| p["publish"].as_array().is_none_or(|r| !r.is_empty()))
        .map(|p| {
            let manifest = p["manifest_path"].as_str().expect("manifest_path");
            let dir = Path::new(manifest).parent().expect("crate directory");
            (
                p["name"].as_str().expect("name").to_string(),
                dir.display().to_string(),
            )
        })
        .collect()
}

#[test]
fn packages_hold_sources_and_no_test_data() {
    let crates = publishable();
    let mut names: Vec<&str> = crates.iter().map(|(n, _)| n.as_str()).collect();
    names.sort_unstable();
    // The library, the command, and the test kit, whose build-time half the
    // command's build script uses and which the library's unit tests take
    // as a dev-dependency; nothing else (the C API, the preload library, the
    // benchmarks and the library's integration tests, crates/fspace-tests,
    // are built from the repository).
    assert_eq!(
        names,
        ["fspace", "fspace-cli", "fspace-test-kit"],
        "publishable crates"
    );
    for (name, dir) in &crates {
        let list = cargo(&["package", "--list", "--allow-dirty", "-p", name]);
        let files: Vec<&str> = list.lines().collect();
        assert!(
            files.contains(&"src/lib.rs") || files.contains(&"src/main.rs"),
            "{name}: no sources in {files:?}"
        );
        for want in ["README.md", "LICENSE-MIT", "LICENSE-APACHE"] {
            assert!(files.contains(&want), "{name}: no {want} in the package");
        }
        let mut bytes = 0;
        // .cargo_vcs_info.json is cargo's own record of the commit.
        for f in files.iter().filter(|f| **f != ".cargo_vcs_info.json") {
            for bad in ["tests/", "bench/", "runs/", "ci/"] {
                assert!(!f.starts_with(bad), "{name} packages {f}");
            }
            for ext in [".img", ".png", ".json", ".raw", ".seg"] {
                assert!(!f.ends_with(ext), "{name} packages data file {f}");
            }
            // Files cargo writes itself (Cargo.toml.orig, ...) are not on disk.
            bytes += std::fs::metadata(Path::new(dir).join(f)).map_or(0, |m| m.len());
        }
        assert!(bytes < 2 << 20, "{name}: {bytes} bytes of sources");
    }
}

/// A crate that depends on the library builds nothing of its tests: the
/// library has no build script and no build-dependency (its tests that
/// need one, for `per_fs!` and the docs' examples, are in
/// crates/fspace-tests).
#[test]
fn the_library_builds_nothing_for_its_tests() {
    let meta: serde_json::Value =
        serde_json::from_str(&cargo(&["metadata", "--no-deps", "--format-version", "1"]))
            .expect("cargo metadata is JSON");
    let lib = meta["packages"]
        .as_array()
        .expect("packages")
        .iter()
        .find(|p| p["name"] == "fspace")
        .expect("the fspace package");
    let kinds = |list: &serde_json::Value, key: &str| -> Vec<String> {
        let all = list.as_array().expect("a list");
        all.iter().map(|x| x[key].to_string()).collect()
    };
    let targets = kinds(&lib["targets"], "kind");
    assert!(
        !targets.iter().any(|k| k.contains("custom-build")),
        "crates/fspace has a build script: {targets:?}"
    );
    let deps = kinds(&lib["dependencies"], "kind");
    assert!(
        !deps.iter().any(|k| k == "\"build\""),
        "crates/fspace has build-dependencies: {deps:?}"
    );
}

#[test]
fn no_manifest_points_at_a_placeholder() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    for (_, dir) in publishable()
        .into_iter()
        .chain([(String::new(), root.display().to_string())])
    {
        let text = std::fs::read_to_string(Path::new(&dir).join("Cargo.toml")).expect("manifest");
        for placeholder in ["example.invalid", "example.com", "example.org"] {
            assert!(
                !text.contains(placeholder),
                "{dir}/Cargo.toml: {placeholder}"
            );
        }
    }
}

/// The systemd units docs/monitoring.md shows are the files the Debian
/// package installs (`ci/deb.sh check` runs `systemd-analyze verify` on the
/// installed ones), they run the package's `/usr/bin/fspace`, and no
/// document sends anyone to `/usr/local/bin/fspace`, which no documented
/// install provides.
#[test]
fn documented_units_are_the_packaged_ones() {
    let cli = Path::new(env!("CARGO_MANIFEST_DIR"));
    let root = cli.join("../..");
    let manifest = std::fs::read_to_string(cli.join("Cargo.toml")).expect("manifest");
    assert!(
        manifest.contains(r#"["systemd/fspace-*", "usr/lib/systemd/system/", "644"]"#),
        "the package does not install systemd/fspace-*"
    );
    assert!(manifest.contains(r#"recommends = "bash-completion""#));
    let doc = std::fs::read_to_string(root.join("docs/monitoring.md")).expect("monitoring.md");
    let mut units: Vec<String> = std::fs::read_dir(cli.join("systemd"))
        .expect("systemd/")
        .map(|e| e.expect("entry").file_name().to_string_lossy().into_owned())
        .collect();
    units.sort();
    assert_eq!(
        units,
        [
            "fspace-alert@.service",
            "fspace-compare@.service",
            "fspace-compare@.timer",
            "fspace-probe@.service",
            "fspace-probe@.timer"
        ]
    );
    for unit in &units {
        let text = std::fs::read_to_string(cli.join("systemd").join(unit)).expect("unit");
        for line in text.lines().filter(|l| l.starts_with("ExecStart=")) {
            let cmd = line["ExecStart=".len()..].split(' ').next().unwrap_or("");
            assert!(
                ["/usr/bin/fspace", "/bin/sh", ""].contains(&cmd),
                "{unit}: {line}"
            );
        }
        // The installed path, then the file's text in the block after it.
        let heading = format!("`/usr/lib/systemd/system/{unit}`");
        let after = doc
            .split(&heading)
            .nth(1)
            .unwrap_or_else(|| panic!("monitoring.md does not show {heading}"));
        let block = after
            .split("```text\n")
            .nth(1)
            .and_then(|b| b.split("```\n").next())
            .unwrap_or_else(|| panic!("no block after {heading}"));
        assert_eq!(
            block, text,
            "monitoring.md's {unit} is not the packaged file"
        );
    }
    let mut docs = vec![root.join("README.md")];
    docs.extend(
        std::fs::read_dir(root.join("docs"))
            .expect("docs/")
            .map(|e| e.expect("entry").path())
            .filter(|p| p.extension().is_some_and(|x| x == "md")),
    );
    for d in docs {
        let text = std::fs::read_to_string(&d).expect("doc");
        assert!(
            !text.contains("/usr/local/bin/fspace"),
            "{} names /usr/local/bin/fspace",
            d.display()
        );
    }
}
