//! DESIGN.md invariant 8: no test carries the ignore attribute (a known failure is fixed or
//! reported, never parked in the suite).
use std::path::Path;

fn rust_files(dir: &Path, out: &mut Vec<std::path::PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let p = entry.unwrap().path();
        if p.is_dir() {
            rust_files(&p, out);
        } else if p.extension().is_some_and(|e| e == "rs") {
            out.push(p);
        }
    }
}

#[test]
fn no_test_is_ignored() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut files = Vec::new();
    for d in ["src", "tests", "benches"] {
        if root.join(d).is_dir() {
            rust_files(&root.join(d), &mut files);
        }
    }
    assert!(files.len() > 50, "too few sources found: {}", files.len());
    let marker = ["#[", "ignore"].concat();
    for f in files {
        let text = std::fs::read_to_string(&f).unwrap();
        assert!(
            !text.contains(&marker),
            "{} has an ignored test",
            f.display()
        );
    }
}
